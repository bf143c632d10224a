import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { precompress } from '../../lib/compress/precompress.js';
import { lookupSync } from '../../lib/compress/cache.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// A variant cache that someone else can write (a CI cache restored from another branch, a shared
// runner): what such a writer can do to a build, and what it cannot.

let tmp;
let cacheDir;
beforeEach(async () => {
  tmp = await tempDir('pc-cache-hostile-');
  cacheDir = path.join(tmp, 'cache');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const SITE = {
  'index.html': textOf(4000, 1),
  'assets/app.js': textOf(300_000, 2),
  'assets/style.css': textOf(20_000, 3),
};

async function build(dir, tree = SITE) {
  await fs.rm(dir, { recursive: true, force: true });
  await writeTree(dir, tree);
}

/** The cache's entry files. */
function entryFiles(dir) {
  return fsSync.readdirSync(dir, { recursive: true }).map(String).filter((p) => /^[0-9a-f]{2}[\\/][0-9a-f]{64}$/.test(p)).map((p) => path.join(dir, p));
}

/**
 * Rewrite an entry as an attacker would: other compressed bytes, and a record whose size and
 * SHA-256 are recomputed for them (the format is documented in lib/compress/cache.js).
 */
function forge(file, bytes) {
  const key = path.basename(file);
  const old = /** @type {any} */ (lookupSync(path.dirname(path.dirname(file)), key));
  const rec = { key, size: bytes.length, bytes: bytes.length, sha256: crypto.createHash('sha256').update(bytes).digest('hex'), encodeMs: old.encodeMs };
  const json = Buffer.from(JSON.stringify(rec));
  const tail = Buffer.alloc(12);
  tail.writeUInt32BE(json.length, 0);
  tail.write('PCCACHE1', 4, 'latin1');
  fsSync.writeFileSync(file, Buffer.concat([bytes, json, tail]));
}

const EVIL = 'alert("owned");'.repeat(50);

/** Forge every entry that holds bytes with a variant of EVIL in the entry's own encoding. */
function forgeAll() {
  let n = 0;
  for (const file of entryFiles(cacheDir)) {
    const e = lookupSync(cacheDir, path.basename(file));
    if (e === null || e.bytes === 0) continue;
    const head = fsSync.readFileSync(file).subarray(0, 2);
    const gz = head[0] === 0x1f && head[1] === 0x8b;
    forge(file, gz ? zlib.gzipSync(EVIL) : zlib.brotliCompressSync(EVIL));
    n++;
  }
  return n;
}

/** Every variant in `dist` decodes to its source. */
async function expectIntact(dist) {
  const manifest = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  let n = 0;
  for (const [rel, e] of Object.entries(manifest.files)) {
    const src = await fs.readFile(path.join(dist, rel));
    if (e.variants.br) expect(zlib.brotliDecompressSync(await fs.readFile(path.join(dist, `${rel}.br`)))).toEqual(src);
    if (e.variants.gzip) expect(zlib.gunzipSync(await fs.readFile(path.join(dist, `${rel}.gz`)))).toEqual(src);
    n += Object.keys(e.variants).length;
  }
  return n;
}

test.each([
  ['buffered', {}],
  ['streamed', { streamThreshold: 100_000 }],
])('a rewritten entry with a recomputed size and SHA-256 is a miss, removed and reported, never written as a variant (%s)', async (_label, extra) => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  await precompress(dist, { cacheDir, ...extra });
  expect(forgeAll()).toBe(6);

  await build(dist);
  const r = await precompress(dist, { cacheDir, ...extra });
  expect(r.ok).toBe(true);
  expect(r.cache).toMatchObject({ hits: 0, misses: 6 });
  expect(await expectIntact(dist)).toBe(6);
  expect(r.warnings.some((w) => w.path === cacheDir && /6 cache entries did not decode to their source/.test(w.message))).toBe(true);
  // Replaced by good entries: the next emptied build takes them all.
  await build(dist);
  const again = await precompress(dist, { cacheDir, ...extra });
  expect(again.cache).toMatchObject({ hits: 6, misses: 0 });
  expect(await expectIntact(dist)).toBe(6);
});
