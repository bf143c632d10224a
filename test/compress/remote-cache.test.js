import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { lookupSync } from '../../lib/compress/cache/entry-files.js';
import { normalizeOptions } from '../../lib/options.js';
import { contentHash } from '../../lib/manifest/manifest.js';
import { variantKey } from '../../lib/compress/pass/remote-run.js';
import { decodeActionResult, encodeActionResult } from '../../lib/compress/cache/action-result.js';
import { shownUrl } from '../../lib/compress/cache/http-cache.js';
import { indexKey } from '../../lib/compress/dictionaries/dictionary-remote.js';
import { storeFolderFor } from '../../lib/compress/dictionaries/dictionary-store.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { decodeDelta } from '../helpers/delta.js';
import { deltaEncoders, dictionaryHashOf } from '../../lib/compress/dictionaries/delta-encode.js';
import { runCommand } from '../helpers/spawn.js';
import { freePort, nginxDavMissing, startFaultyCache, startNginxDav } from '../helpers/cache-servers.js';

// The remote cache (--cache-url) between "machines" that share nothing but its URL: each has its
// own project folder, local cache and dictionary store. Against nginx with WebDAV PUT (the real
// server), and an in-process server for the faults nginx cannot be made to have.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const noNginx = nginxDavMissing();
if (noNginx) console.warn(`remote-cache tests against nginx skipped: ${noNginx}`);
const withNginx = noNginx ? test.skip : test;
/** Deltas (deploy and site dictionary) are made only where Node has a dictionary encoder (none on 22.12). */
const withDeltas = deltaEncoders().length > 0;
if (!withDeltas) console.warn(`remote-cache: no delta checks, Node ${process.version} has no zstd or Brotli dictionary encoder`);
/** Builds of a few machines each, on a loaded 2-core machine: more than the default 60 s. */
const SLOW = 240_000;

let tmp;
beforeEach(async () => {
  tmp = await tempDir('pc-remote-');
});
afterEach(async () => {
  for (const k of ['PRECOMPRESSOR_CACHE_TOKEN', 'PRECOMPRESSOR_CACHE_URL', 'PRECOMPRESSOR_CACHE_HEADERS']) delete process.env[k];
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A machine of its own: the site written into its folder, its own local cache and store. */
async function machine(name) {
  const root = path.join(tmp, name);
  const dist = path.join(root, 'dist');
  await writeSite(dist, 6);
  await writeTree(dist, {
    'assets/app.js': textOf(300_000, 2), // over the split threshold: one task per encoding
    'assets/style.css': textOf(20_000, 3),
    'data.json': textOf(8000, 4),
    'noise.txt': noiseOf(5000), // not smaller: the entry records only that
  });
  const options = { cacheDir: path.join(root, 'cache'), dictionaryStore: path.join(root, 'store'), concurrency: 2 };
  return { dist, options };
}

/** Every variant in the folder's manifest decodes to its source; returns the variants' bytes by path. */
async function variantsOf(dir) {
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'precompressor-manifest.json'), 'utf8'));
  const out = new Map();
  for (const [rel, e] of Object.entries(manifest.files)) {
    const src = await fs.readFile(path.join(dir, rel));
    for (const [enc, suffix, decode] of [['br', 'br', zlib.brotliDecompressSync], ['gzip', 'gz', zlib.gunzipSync]]) {
      if (!e.variants[enc]) continue;
      const bytes = await fs.readFile(path.join(dir, `${rel}.${suffix}`));
      expect(decode(bytes)).toEqual(src);
      out.set(`${rel}.${suffix}`, bytes);
    }
  }
  return out;
}

describe('options', () => {
  test('the URL from the option or the environment; credentials only from the environment, never shown', () => {
    expect(normalizeOptions('x').cacheUrl).toBeNull();
    expect(() => normalizeOptions('x', { cacheUrl: 'ftp://host/' })).toThrow(/Expected options\.cacheUrl to be an http:\/\/ or https:\/\/ URL/);
    process.env.PRECOMPRESSOR_CACHE_URL = 'https://cache.example/site';
    expect(normalizeOptions('x').cacheUrl).toBe('https://cache.example/site');
    expect(normalizeOptions('x', { cacheUrl: 'http://other:8080' }).cacheUrl).toBe('http://other:8080');
    process.env.PRECOMPRESSOR_CACHE_TOKEN = 'tok';
    process.env.PRECOMPRESSOR_CACHE_HEADERS = '{"X-Api-Key":"k1"}';
    expect(normalizeOptions('x').cacheHeaders).toEqual({ 'x-api-key': 'k1', authorization: 'Bearer tok' });
    process.env.PRECOMPRESSOR_CACHE_HEADERS = '{"x-api-key": "secret-value"'; // not JSON
    expect(() => normalizeOptions('x')).toThrow(/PRECOMPRESSOR_CACHE_HEADERS .*\(its value is not shown\)$/);
    try {
      normalizeOptions('x');
    } catch (err) {
      expect(err.message).not.toMatch(/secret-value/);
    }
    expect(() => normalizeOptions('x', { cacheUrlReadOnly: 'yes' })).toThrow(/options\.cacheUrlReadOnly/);
    expect(shownUrl('https://ci:pw@cache.example:9443/site/?t=1#x')).toBe('https://cache.example:9443/site');
  });
});

describe('the /ac/ record (an ActionResult)', () => {
  const key = 'a'.repeat(64);
  const rec = { key, size: 120, bytes: 120, encodeMs: 3.5, sha256: 'b'.repeat(64) };

  test('round trip, and what is not ours for that key is null', () => {
    expect(decodeActionResult(encodeActionResult(rec), key)).toEqual(rec);
    const notSmaller = { key, size: 900, bytes: 0, encodeMs: 1, sha256: null };
    expect(decodeActionResult(encodeActionResult(notSmaller), key)).toEqual(notSmaller);
    expect(decodeActionResult(encodeActionResult(rec), 'c'.repeat(64))).toBeNull();
    const buf = encodeActionResult(rec);
    expect(decodeActionResult(buf.subarray(0, buf.length - 3), key)).toBeNull();
    expect(decodeActionResult(Buffer.from('not a protobuf at all'), key)).toBeNull();
    // A server's own fields are skipped (bazel-remote adds execution_metadata, field 9).
    const withMeta = Buffer.concat([buf, Buffer.from([0x4a, 0x03, 0x0a, 0x01, 0x78])]);
    expect(decodeActionResult(withMeta, key)).toEqual(rec);
  });
});

test('variantKey() is the key the workers store a variant under', async () => {
  const m = await machine('a');
  await precompress(m.dist, m.options);
  const opts = normalizeOptions(m.dist, m.options);
  for (const rel of ['assets/app.js', 'data.json', 'index.html', 'noise.txt']) {
    const data = await fs.readFile(path.join(m.dist, rel));
    for (const enc of ['br', 'gzip']) {
      expect(lookupSync(m.options.cacheDir, variantKey(contentHash(data), data.length, rel, enc, opts))).not.toBeNull();
    }
  }
}, SLOW);

describe('against nginx with WebDAV PUT', () => {
  let server;
  beforeEach(async () => {
    if (!noNginx) server = await startNginxDav(path.join(tmp, 'nginx'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  withNginx('machine B, sharing only the URL, compresses nothing and writes the same bytes', async () => {
    const a = await machine('a');
    const ra = await precompress(a.dist, { ...a.options, cacheUrl: server.url });
    expect(ra.ok).toBe(true);
    expect(ra.cache.remote).toMatchObject({ url: server.url, hits: 0, rejected: 0, down: null, readOnly: false });
    // The 20 variants, and the pages' deltas where this Node makes them.
    if (withDeltas) expect(ra.cache.remote.uploaded).toBeGreaterThan(20);
    else expect(ra.cache.remote.uploaded).toBe(20);
    expect(ra.warnings).toEqual([]);

    const b = await machine('b');
    const rb = await precompress(b.dist, { ...b.options, cacheUrl: server.url });
    expect(rb.ok).toBe(true);
    expect(rb.files.compressed).toBe(0);
    expect(rb.files.fromCache).toBe(ra.files.compressed + ra.files.notSmaller - rb.files.notSmaller);
    expect(rb.cache.misses).toBe(0); // every variant, and the pages' deltas against the site dictionary
    expect(rb.cache.remote).toMatchObject({ misses: 0, rejected: 0, uploaded: 0, down: null });
    expect(rb.warnings).toEqual([]);
    expect(await variantsOf(b.dist)).toEqual(await variantsOf(a.dist));
    expect(rb.siteDictionary.path).toBe(ra.siteDictionary.path);
  }, SLOW);

  withNginx('entries rewritten on the server never reach the output: they are encoded again and put right', async () => {
    const a = await machine('a');
    await precompress(a.dist, { ...a.options, cacheUrl: server.url });
    // Whoever can write the server points every record at another valid blob: gzip of other bytes.
    const forged = zlib.gzipSync(Buffer.from('<script>alert(1)</script>'.repeat(50)));
    const forgedHash = crypto.createHash('sha256').update(forged).digest('hex');
    await fs.mkdir(path.join(server.store, 'cas'), { recursive: true });
    await fs.writeFile(path.join(server.store, 'cas', forgedHash), forged);
    let rewritten = 0;
    // Every output's record (the dictionary store's index aside: its own test is below).
    const index = indexKey(storeFolderFor(a.options.dictionaryStore, a.dist));
    for (const key of await fs.readdir(path.join(server.store, 'ac'))) {
      if (key === index) continue;
      const file = path.join(server.store, 'ac', key);
      const rec = decodeActionResult(await fs.readFile(file), key);
      if (rec === null || rec.bytes === 0) continue;
      await fs.writeFile(file, encodeActionResult({ ...rec, size: forged.length, bytes: forged.length, sha256: forgedHash }));
      rewritten++;
    }
    expect(rewritten).toBeGreaterThan(10);

    const b = await machine('b');
    const rb = await precompress(b.dist, { ...b.options, cacheUrl: server.url });
    expect(rb.ok).toBe(true);
    expect(rb.cache.rejected).toBe(rewritten);
    expect(rb.warnings.map((w) => w.message).join('\n')).toMatch(/did not decode to their source/);
    expect(await variantsOf(b.dist)).toEqual(await variantsOf(a.dist));
    // B uploaded the right ones over them: machine C takes everything.
    expect(rb.cache.remote.uploaded).toBe(rewritten);
    const c = await machine('c');
    const rc = await precompress(c.dist, { ...c.options, cacheUrl: server.url });
    expect(rc.files.compressed).toBe(0);
    expect(rc.cache.rejected).toBe(0);
  }, SLOW);

  /** Version `v` of an app bundle: the same 40 kB of code with a small edit per version. */
  const bundle = (v) => {
    const base = textOf(40_000, 3);
    return `${base.slice(0, 20_000)} version ${v} ${base.slice(20_000)}`;
  };

  /** A build of version `v` by the CLI on a fresh machine (its own folder as the working directory). */
  async function deploy(name, v) {
    const root = path.join(tmp, name);
    await writeTree(path.join(root, 'dist'), { [`assets/index-V${v}xxxxx1.js`]: bundle(v), 'index.html': textOf(3000, 5) });
    const own = ['--cache-dir', 'cache', '--dictionary-store', 'store']; // nothing shared but the URL
    const r = await runCommand(process.execPath, [BIN, 'dist', '--json', '--cache-url', server.url, ...own], { cwd: root });
    expect(r.code).toBe(0);
    return { root, report: JSON.parse(r.stdout) };
  }

  (noNginx || !withDeltas ? test.skip : test)('a fresh machine makes the deploy delta from the previous version on the server, only if its SHA-256 matches', async () => {
    await deploy('a', 1);
    const b = await deploy('b', 2);
    expect(b.report.deltas.files).toBe(1);
    const manifest = JSON.parse(await fs.readFile(path.join(b.root, 'dist/precompressor-manifest.json'), 'utf8'));
    const dictKey = dictionaryHashOf(contentHash(Buffer.from(bundle(1))));
    const deltas = manifest.files['assets/index-V2xxxxx1.js'].deltas;
    expect(Object.keys(deltas)).toEqual([dictKey]);
    for (const enc of Object.keys(deltas[dictKey])) {
      const delta = await fs.readFile(path.join(b.root, 'dist', `assets/index-V2xxxxx1.js.${Buffer.from(dictKey, 'base64').toString('hex').slice(0, 16)}.${enc}`));
      expect(decodeDelta(enc, delta, Buffer.from(bundle(1))).toString()).toBe(bundle(2));
    }
    // Version 2's bytes rewritten on the server: machine C, building version 3, makes no delta against them.
    const v2 = path.join(server.store, 'cas', crypto.createHash('sha256').update(bundle(2)).digest('hex'));
    await fs.writeFile(v2, bundle(99));
    const c = await deploy('c', 3);
    const m3 = JSON.parse(await fs.readFile(path.join(c.root, 'dist/precompressor-manifest.json'), 'utf8'));
    const against = Object.keys(m3.files['assets/index-V3xxxxx1.js'].deltas ?? {});
    expect(against).not.toContain(dictionaryHashOf(contentHash(Buffer.from(bundle(2)))));
    expect(against).toContain(dictKey); // version 1 is still there, intact
  }, SLOW);

  withNginx('--cache-url-read-only reads and writes nothing; the CLI says what the remote gave', async () => {
    const a = await machine('a');
    const ra = await precompress(a.dist, { ...a.options, cacheUrl: server.url, cacheUrlReadOnly: true });
    expect(ra.cache.remote).toMatchObject({ uploaded: 0, readOnly: true, hits: 0 });
    await expect(fs.readdir(path.join(server.store, 'ac'))).rejects.toThrow(/ENOENT/);
    await precompress(a.dist, { ...a.options, cacheUrl: server.url, force: true });

    const b = await machine('b');
    const r = await runCommand(process.execPath, [BIN, b.dist, '--cache-url', server.url, '--cache-url-read-only',
      '--cache-dir', b.options.cacheDir, '--dictionary-store', b.options.dictionaryStore]);
    expect(r.code).toBe(0);
    // The variants came from the remote (A's forced run uploaded them; the pages' deltas it kept from
    // its folder were not encoded, so not uploaded: B encodes those, 6 pages for each delta encoding Node can make).
    const outputs = 20 + 6 * deltaEncoders().length;
    expect(r.stdout).toMatch(new RegExp(`remote cache ${server.url}: 20 of ${outputs} fetched, 0 uploaded`));
    expect(r.stdout).toMatch(/compressed 0, from cache \d+/);
  }, SLOW);
});

describe('a remote that is down, slow or refusing never fails the build', () => {
  let server;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** A build on a fresh machine through `url`: it succeeds, encodes everything, and says so once. */
  async function buildsLocally(url, why) {
    const m = await machine('m');
    const r = await precompress(m.dist, { ...m.options, cacheUrl: url });
    expect(r.ok).toBe(true);
    expect(r.files.fromCache).toBe(0);
    expect(r.files.compressed).toBeGreaterThan(5);
    expect(r.cache.remote.down).toMatch(why);
    const lines = r.warnings.filter((w) => w.path === url.replace(/\/+$/, ''));
    expect(lines).toHaveLength(1);
    expect(lines[0].message).toMatch(/not used for the rest of this run .*; going on with the local cache/);
    await variantsOf(m.dist);
    return r;
  }

  test('nothing listening', async () => {
    await buildsLocally(`http://127.0.0.1:${await freePort()}`, /ECONNREFUSED/);
  }, SLOW);

  test('500 on every request: tried again, then left', async () => {
    server = await startFaultyCache();
    server.faults.status = 500;
    await buildsLocally(server.url, /HTTP 500/);
    // Tried three times (first + 2 retries) before being left; nothing after.
    expect(server.seen.length).toBeLessThanOrEqual(3 * 16);
  }, SLOW);

  test('bodies cut short', async () => {
    server = await startFaultyCache();
    const a = await machine('a');
    await precompress(a.dist, { ...a.options, cacheUrl: server.url });
    server.faults.truncate = true;
    await buildsLocally(server.url, /cut short/);
  }, SLOW);

  test('connections dropped', async () => {
    server = await startFaultyCache();
    server.faults.drop = true;
    await buildsLocally(server.url, /socket hang up|ECONNRESET/);
  }, SLOW);

  test('no answer at all: left after the timeout', async () => {
    server = await startFaultyCache();
    server.faults.hang = true;
    await buildsLocally(server.url, /no answer within 2000 ms/);
  }, SLOW);

  test('answers slower than encoding', async () => {
    server = await startFaultyCache();
    server.faults.slowMs = 1100;
    await buildsLocally(server.url, /too slow: 8 requests took over 1000 ms/);
  }, SLOW);

  test('a 403 on the first write makes it read-only, with one line; reads go on', async () => {
    server = await startFaultyCache();
    const a = await machine('a');
    await precompress(a.dist, { ...a.options, cacheUrl: server.url });
    const stored = server.blobs.size;
    const before = server.seen.length;
    server.faults.refuseWrites = true;
    const b = await machine('b');
    await fs.appendFile(path.join(b.dist, 'data.json'), ' changed');
    const r = await precompress(b.dist, { ...b.options, cacheUrl: server.url });
    expect(r.ok).toBe(true);
    expect(r.files.compressed).toBe(1);
    expect(r.cache.remote).toMatchObject({ readOnly: true, down: null, uploaded: 0 });
    expect(r.cache.remote.hits).toBeGreaterThan(10);
    const lines = r.warnings.filter((w) => w.path === server.url);
    expect(lines.map((w) => w.message)).toEqual([`remote cache ${server.url} refused a write (403): read-only for the rest of this run`]);
    expect(server.blobs.size).toBe(stored);
    // The writes already under way when the first 403 came, at most: one per changed variant.
    expect(server.seen.slice(before).filter((s) => s.method === 'PUT').length).toBeLessThanOrEqual(2);
  }, SLOW);

  test('the token comes from the environment, as a bearer token, and is never printed', async () => {
    server = await startFaultyCache();
    process.env.PRECOMPRESSOR_CACHE_TOKEN = 's3cret-token';
    const a = await machine('a');
    const r = await precompress(a.dist, { ...a.options, cacheUrl: server.url });
    expect(server.seen.length).toBeGreaterThan(0);
    expect(server.seen.every((s) => s.headers.authorization === 'Bearer s3cret-token')).toBe(true);
    expect(JSON.stringify(r)).not.toMatch(/s3cret/);
  }, SLOW);

  test('a user name and password in the URL are sent as Basic, and never printed', async () => {
    server = await startFaultyCache();
    const a = await machine('a');
    const r = await precompress(a.dist, { ...a.options, cacheUrl: server.url.replace('//', '//ci:pa55@') });
    expect(server.seen.length).toBeGreaterThan(0);
    expect(server.seen.every((s) => s.headers.authorization === `Basic ${Buffer.from('ci:pa55').toString('base64')}`)).toBe(true);
    expect(r.cache.remote.url).toBe(server.url);
    expect(JSON.stringify(r)).not.toMatch(/pa55/);
  }, SLOW);
});
