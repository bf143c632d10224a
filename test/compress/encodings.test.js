import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { normalizeOptions } from '../../lib/options.js';
import { apiOptionsFromArgv } from '../../lib/cli/options.js';
import { zstdFrameWindowSize, zstdWindowLog, loadWasmZstd, nodeHasZstd } from '../../lib/compress/encoders/zstd.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

const EIGHT_MB = 8 * 1024 * 1024;
const FIXTURE_SITE = path.join(import.meta.dirname, '..', '..', 'fixtures', 'site');
const Zx = /** @type {any} */ (zlib);

/**
 * Window sizes of every frame in `buf`, read from the frame headers and by walking the blocks
 * (RFC 8878 §3.1): written here, independently of lib/compress/encoders/zstd.js, so that the test checks the lib.
 */
function frameWindows(buf) {
  const windows = [];
  let at = 0;
  while (at < buf.length) {
    const magic = buf.readUInt32LE(at);
    if ((magic & 0xfffffff0) === 0x184d2a50) { // skippable frame
      at += 8 + buf.readUInt32LE(at + 4);
      continue;
    }
    if (magic !== 0xfd2fb528) throw new Error(`not a zstd frame at byte ${at}`);
    const fhd = buf[at + 4];
    const single = (fhd & 0x20) !== 0;
    const dictBytes = [0, 1, 2, 4][fhd & 3];
    const fcsBytes = [single ? 1 : 0, 2, 4, 8][fhd >> 6];
    let p = at + 5;
    let window;
    if (!single) {
      const wd = buf[p++];
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    p += dictBytes;
    if (single) {
      let fcs = 0;
      for (let i = fcsBytes - 1; i >= 0; i--) fcs = fcs * 256 + buf[p + i];
      window = fcsBytes === 2 ? fcs + 256 : fcs;
    }
    p += fcsBytes;
    windows.push(window);
    for (let last = false; !last;) {
      const h = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16);
      last = (h & 1) === 1;
      const type = (h >> 1) & 3;
      const size = h >>> 3;
      p += 3 + (type === 1 ? 1 : size); // RLE blocks store one byte
    }
    if (fhd & 4) p += 4; // content checksum
    at = p;
  }
  return windows;
}

/**
 * A decoder that behaves like a browser: it refuses any frame that needs a window above 8 MB
 * (RFC 9659), then decodes (Node's zstd limited to windowLog 23 where Node has it, else zstd
 * compiled to WebAssembly).
 */
async function decodeZstdHttp(buf) {
  for (const w of frameWindows(buf)) if (w > EIGHT_MB) throw new Error(`window of ${w} bytes is above 8 MB`);
  if (nodeHasZstd) return Zx.zstdDecompressSync(buf, { params: { [Zx.constants.ZSTD_d_windowLogMax]: 23 } });
  return Buffer.from((await loadWasmZstd()).decompress(buf));
}

/** 12 MB of compressible text whose repeats are far apart (more than 8 MB for some). */
function bigText() {
  const block = textOf(3 * 1024 * 1024, 11);
  return Buffer.from(block + textOf(2 * 1024 * 1024, 12) + block + textOf(1024 * 1024, 13) + block.slice(0, 3 * 1024 * 1024));
}

const readManifest = async (root) => JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('zstd window', () => {
  test('zstdWindowLog covers the file, never above 2^23', () => {
    expect(zstdWindowLog(1)).toBe(10);
    expect(zstdWindowLog(100_000)).toBe(17);
    expect(zstdWindowLog(EIGHT_MB)).toBe(23);
    expect(zstdWindowLog(12 * 1024 * 1024)).toBe(23);
  });

  test('the test decoder refuses a real frame whose window is above 8 MB, and accepts one at 8 MB', async () => {
    const big = bigText();
    let wide;
    if (nodeHasZstd) {
      wide = Zx.zstdCompressSync(big, { params: { [Zx.constants.ZSTD_c_compressionLevel]: 3, [Zx.constants.ZSTD_c_windowLog]: 24 } });
    } else {
      // Level 20 exists to use a larger window: on a 12 MB input it needs the whole 12 MB.
      wide = Buffer.from((await loadWasmZstd()).compress(big, 20));
    }
    expect(zstdFrameWindowSize(wide)).toBeGreaterThan(EIGHT_MB);
    await expect(decodeZstdHttp(wide)).rejects.toThrow(/above 8 MB/);
    if (nodeHasZstd) {
      // And Node's own decoder, limited to windowLog 23, refuses it too.
      expect(() => Zx.zstdDecompressSync(wide, { params: { [Zx.constants.ZSTD_d_windowLogMax]: 23 } })).toThrow();
    }
  });

  test('precompress writes .zst that a decoder limited to 8 MB decodes, on a 12 MB file too', async () => {
    const big = bigText();
    expect(big.length).toBeGreaterThan(12 * 1024 * 1024 - 1);
    await writeTree(root, { 'big.txt': big, 'app.js': textOf(50_000, 2), 'a/small.css': textOf(3000, 4) });
    const report = await precompress(root, { encodings: ['zstd'] });
    expect(report.ok).toBe(true);
    const m = await readManifest(root);
    expect(m.settings).toMatchObject({ encodings: ['zstd'], zstdLevel: 19 });
    for (const rel of ['big.txt', 'app.js', 'a/small.css']) {
      const zst = await fs.readFile(path.join(root, `${rel}.zst`));
      expect(m.files[rel].variants).toEqual({ zstd: { size: zst.length } });
      const windows = frameWindows(zst);
      expect(windows.every((w) => w <= EIGHT_MB)).toBe(true);
      expect(Buffer.compare(await decodeZstdHttp(zst), await fs.readFile(path.join(root, rel)))).toBe(0);
    }
    expect(frameWindows(await fs.readFile(path.join(root, 'big.txt.zst')))).toEqual([EIGHT_MB]);
    expect(report.bytes.zstd).toBeGreaterThan(0);
  });
});

describe('options', () => {
  test('--zstd adds zstd to the encodings; --zstd-level and --zopfli reach the API', () => {
    expect(apiOptionsFromArgv({ zstd: true })).toEqual({ encodings: ['br', 'gzip', 'zstd'] });
    expect(apiOptionsFromArgv({ zstd: true, encodings: 'gzip' })).toEqual({ encodings: ['gzip', 'zstd'] });
    expect(apiOptionsFromArgv({ 'zstd-level': 12, zopfli: true })).toEqual({ zstdLevel: 12, zopfli: true });
    const o = normalizeOptions('x', apiOptionsFromArgv({ zstd: true }));
    expect(o.encodings).toEqual(['br', 'zstd', 'gzip']);
    expect(o.zstdLevel).toBe(19);
    expect(o.zopfli).toBe(false);
  });

  test('zstd levels above 19 (windows above 8 MB) and a non-boolean zopfli are refused', () => {
    expect(() => normalizeOptions('x', { zstdLevel: 20 })).toThrow('Expected options.zstdLevel to be an integer from 1 to 19, got 20 (number)');
    expect(() => normalizeOptions('x', { zstdLevel: 0 })).toThrow(/zstdLevel/);
    expect(() => normalizeOptions('x', { zopfli: 'yes' })).toThrow('Expected options.zopfli to be a boolean, got "yes" (string)');
  });
});

describe('zopfli', () => {
  test('writes valid gzip, never larger than gzip -9, on the fixture site', async () => {
    await fs.cp(FIXTURE_SITE, root, { recursive: true });
    const report = await precompress(root, { encodings: ['gzip'], zopfli: true });
    expect(report.ok).toBe(true);
    const m = await readManifest(root);
    expect(m.settings.zopfli).toBe(true);
    let compared = 0;
    for (const [rel, e] of Object.entries(m.files)) {
      if (!e.variants.gzip) continue;
      const original = await fs.readFile(path.join(root, rel));
      const gz = await fs.readFile(path.join(root, `${rel}.gz`));
      expect(Buffer.compare(zlib.gunzipSync(gz), original)).toBe(0);
      expect(gz.length).toBeLessThanOrEqual(zlib.gzipSync(original, { level: 9, memLevel: 9 }).length);
      compared++;
    }
    expect(compared).toBeGreaterThan(5);
  });

  test('switching zopfli on or off recompresses; the same setting again does not', async () => {
    await writeTree(root, { 'a.js': textOf(20_000, 5), 'b.css': textOf(6000, 6) });
    await precompress(root, { encodings: ['gzip'] });
    const plain = (await fs.readFile(path.join(root, 'a.js.gz'))).length;

    const on = await precompress(root, { encodings: ['gzip'], zopfli: true });
    expect(on.files.compressed).toBe(2);
    expect(on.files.unchanged).toBe(0);
    const zopfli = (await fs.readFile(path.join(root, 'a.js.gz'))).length;
    expect(zopfli).toBeLessThan(plain);
    expect((await readManifest(root)).files['a.js'].variants.gzip.size).toBe(zopfli);

    const again = await precompress(root, { encodings: ['gzip'], zopfli: true });
    expect(again.files.unchanged).toBe(2);

    // Back to the first setting: its variants are written again, from the variant cache.
    const off = await precompress(root, { encodings: ['gzip'] });
    expect(off.files.fromCache).toBe(2);
    expect((await fs.readFile(path.join(root, 'a.js.gz'))).length).toBe(plain);
  });
});

describe('serving zstd', () => {
  /** GET `url` with `accept`, returning status, headers and the raw body. */
  function get(url, accept) {
    return new Promise((resolve, reject) => {
      http.get(url, { headers: { 'accept-encoding': accept } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
  }

  test('serveStatic sends the .zst with Content-Encoding: zstd when it is the best the client accepts', async () => {
    const { startPreview } = await import('../../lib/serve/adapters/preview.js');
    const js = textOf(40_000, 9);
    await writeTree(root, { 'app.js': js });
    await precompress(root, { encodings: ['br', 'zstd', 'gzip'], brotliQuality: 5 });
    const { url, close } = await startPreview({ root, port: 0 });
    try {
      const z = await get(`${url}app.js`, 'zstd, gzip');
      expect(z.status).toBe(200);
      expect(z.headers['content-encoding']).toBe('zstd');
      expect(z.headers.vary).toMatch(/accept-encoding/i);
      expect((await decodeZstdHttp(z.body)).toString()).toBe(js);

      // Server preference: br, then zstd, then gzip.
      expect((await get(`${url}app.js`, 'gzip, zstd, br')).headers['content-encoding']).toBe('br');
      expect((await get(`${url}app.js`, 'gzip, zstd;q=0')).headers['content-encoding']).toBe('gzip');
      const plain = await get(`${url}app.js`, 'identity');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.toString()).toBe(js);
    } finally {
      await close();
    }
  });
});

describe('Brotli mode for fonts', () => {
  const { constants: Z } = zlib;
  test('fonts up to FONT_TRIAL_MAX try font mode and keep the smaller of it and generic; bigger ones use generic', async () => {
    const { zlibOptions, encodeBufferSync, FONT_TRIAL_MAX } = await import('../../lib/compress/encoders/encode.js');
    const base = { brotliQuality: 11, gzipLevel: 9, mode: /** @type {const} */ ('font') };
    expect(zlibOptions('br', { ...base, size: FONT_TRIAL_MAX }).params[Z.BROTLI_PARAM_MODE]).toBe(Z.BROTLI_MODE_FONT);
    expect(zlibOptions('br', { ...base, size: FONT_TRIAL_MAX + 1 }).params[Z.BROTLI_PARAM_MODE]).toBe(Z.BROTLI_MODE_GENERIC);
    // a font-like table: big-endian records with small deltas
    const buf = Buffer.alloc(20000);
    for (let i = 0; i < buf.length; i += 4) buf.writeUInt32BE((i * 7919) % 65536, i);
    const opts = zlibOptions('br', { ...base, size: buf.length });
    const out = encodeBufferSync(buf, 'br', opts);
    const font = zlib.brotliCompressSync(buf, opts);
    const generic = zlib.brotliCompressSync(buf, { ...opts, params: { ...opts.params, [Z.BROTLI_PARAM_MODE]: Z.BROTLI_MODE_GENERIC } });
    expect(out.length).toBe(Math.min(font.length, generic.length));
    expect(zlib.brotliDecompressSync(out).equals(buf)).toBe(true);
  });
});
