import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { precompress, pass } from '../../lib/compress/pass/precompress.js';
import { lookupSync, readBytesSync, storeFile } from '../../lib/compress/cache/entry-files.js';
import { info } from '../../lib/compress/cache/upkeep.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

// The variant cache (lib/compress/cache/entry-files.js) through real runs: an output folder emptied between
// builds, a changed file, damaged entries, two processes at once, the size cap, --no-cache.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const cli = (args) => runCommand(process.execPath, [BIN, ...args]);

let tmp;
let cacheDir;
beforeEach(async () => {
  tmp = await tempDir('pc-cache-');
  cacheDir = path.join(tmp, 'cache');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const SITE = {
  'index.html': textOf(4000, 1),
  'assets/app.js': textOf(300_000, 2), // over the split threshold: one task per encoding
  'assets/style.css': textOf(20_000, 3),
  'data.json': textOf(8000, 4),
  'noise.bin': noiseOf(5000), // not smaller: the cache records that too
};

/** Write the site into a fresh (emptied) folder, as a bundler does before each build. */
async function build(dir, tree = SITE) {
  await fs.rm(dir, { recursive: true, force: true });
  await writeTree(dir, tree);
}

/** Every variant decodes to its source. */
async function expectIntact(dir) {
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'precompressor-manifest.json'), 'utf8'));
  let n = 0;
  for (const [rel, e] of Object.entries(manifest.files)) {
    const src = await fs.readFile(path.join(dir, rel));
    if (e.variants.br) expect(zlib.brotliDecompressSync(await fs.readFile(path.join(dir, `${rel}.br`)))).toEqual(src);
    if (e.variants.gzip) expect(zlib.gunzipSync(await fs.readFile(path.join(dir, `${rel}.gz`)))).toEqual(src);
    n += Object.keys(e.variants).length;
  }
  return n;
}

/** The entry files of the cache. */
function entryFiles(dir) {
  if (!fsSync.existsSync(dir)) return [];
  return fsSync.readdirSync(dir, { recursive: true }).map(String).filter((p) => /^[0-9a-f]{2}[\\/][0-9a-f]{64}$/.test(p)).map((p) => path.join(dir, p));
}

test('an emptied output folder gets every variant from the cache, byte for byte; a changed file is the only one encoded', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  const cold = await precompress(dist, { cacheDir });
  expect(cold.files).toMatchObject({ compressed: 4, fromCache: 0, notSmaller: 1 });
  expect(cold.cache).toMatchObject({ enabled: true, dir: cacheDir, hits: 0, misses: 10 });
  const before = await fs.readFile(path.join(dist, 'assets/app.js.br'));

  await build(dist);
  const warm = await precompress(dist, { cacheDir });
  expect(warm.files).toMatchObject({ compressed: 0, fromCache: 4, notSmaller: 1 });
  expect(warm.cache).toMatchObject({ hits: 10, misses: 0 });
  expect(warm.cache.cpuSavedMs).toBeGreaterThan(0);
  expect(await fs.readFile(path.join(dist, 'assets/app.js.br'))).toEqual(before);
  expect(await expectIntact(dist)).toBe(8);
  // A variant from the cache carries its source's mtime, as an encoded one does.
  const [src, br] = await Promise.all(['assets/app.js', 'assets/app.js.br'].map((p) => fs.stat(path.join(dist, p))));
  expect(Math.abs(br.mtimeMs - src.mtimeMs)).toBeLessThan(1); // (set through a Date: millisecond precision)

  await build(dist, { ...SITE, 'assets/style.css': textOf(21_000, 9) });
  const changed = await precompress(dist, { cacheDir });
  expect(changed.changes.filter((c) => c.action === 'compress')).toEqual([{ path: 'assets/style.css', action: 'compress' }]);
  expect(changed.files).toMatchObject({ compressed: 1, fromCache: 3 });
  await expectIntact(dist);
});

test('a rebuild whose variants are all in the cache runs no task on a worker, nor one changed file', async () => {
  const dist = path.join(tmp, 'dist');
  const small = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`icons/i${i}.svg`, textOf(300 + 10 * i, 100 + i)]));
  await build(dist, small);
  await precompress(dist, { cacheDir });
  const before = new Map();
  for (const rel of Object.keys(small)) before.set(rel, [await fs.readFile(path.join(dist, `${rel}.br`)), await fs.readFile(path.join(dist, `${rel}.gz`))]);

  await build(dist, small);
  const onWorker = [];
  const r = (await pass(dist, { cacheDir }, new Set(), { onJobStart: (t) => onWorker.push(t.rel) })).report;
  expect(r.ok).toBe(true);
  expect(onWorker).toEqual([]);
  expect(r.cache).toMatchObject({ hits: 80, misses: 0, rejected: 0 });
  expect(r.files).toMatchObject({ compressed: 0, fromCache: 40 });
  for (const [rel, [br, gz]] of before) {
    expect(await fs.readFile(path.join(dist, `${rel}.br`))).toEqual(br);
    expect(await fs.readFile(path.join(dist, `${rel}.gz`))).toEqual(gz);
    const [src, v] = await Promise.all([fs.stat(path.join(dist, rel)), fs.stat(path.join(dist, `${rel}.br`))]);
    expect(Math.abs(v.mtimeMs - src.mtimeMs)).toBeLessThan(1); // its source's mtime (to the ms), as an encoded variant
  }

  await build(dist, { ...small, 'icons/i7.svg': textOf(777, 7) });
  onWorker.length = 0;
  const changed = (await pass(dist, { cacheDir }, new Set(), { onJobStart: (t) => onWorker.push(t.rel) })).report;
  expect(changed.cache).toMatchObject({ hits: 78, misses: 2 });
  expect(onWorker).toEqual([]); // a pass this small is encoded here too (SMALL_PASS_COST)
  expect(await expectIntact(dist)).toBe(80);
});

test('streamed files (at or above streamThreshold) go through the cache too', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  const cold = await precompress(dist, { cacheDir, streamThreshold: 100_000 }); // app.js (300 kB) is streamed
  expect(cold.cache).toMatchObject({ hits: 0, misses: 10 });
  await build(dist);
  const warm = await precompress(dist, { cacheDir, streamThreshold: 100_000 });
  expect(warm.cache).toMatchObject({ hits: 10, misses: 0 });
  expect(warm.files).toMatchObject({ compressed: 0, fromCache: 4 });
  expect(await expectIntact(dist)).toBe(8);
  // The same variants as in memory: the entries are shared with runs that do not stream.
  await build(dist);
  expect((await precompress(dist, { cacheDir })).cache).toMatchObject({ hits: 10, misses: 0 });
});

test('a damaged or truncated entry is never copied out: it is removed and the variant encoded again', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  await precompress(dist, { cacheDir });
  const entries = entryFiles(cacheDir);
  expect(entries).toHaveLength(10);
  // Flip one byte inside the compressed bytes of every entry that holds bytes, truncate one.
  const withBytes = [];
  for (const file of entries) {
    const key = path.basename(file);
    const entry = lookupSync(cacheDir, key);
    if (entry && entry.bytes > 0) withBytes.push(entry);
  }
  expect(withBytes.length).toBe(8);
  const [truncated, ...flipped] = withBytes;
  for (const e of flipped) {
    const buf = await fs.readFile(e.file);
    buf[Math.floor(e.size / 2)] ^= 0xff;
    await fs.writeFile(e.file, buf);
  }
  await fs.truncate(truncated.file, truncated.size - 3);

  await build(dist);
  const r = await precompress(dist, { cacheDir });
  expect(r.ok).toBe(true);
  expect(r.cache).toMatchObject({ hits: 2, misses: 8 }); // only the two "not smaller" records were whole
  expect(await expectIntact(dist)).toBe(8);
  // The damaged entries were replaced by good ones: the next emptied build takes them all.
  for (const e of withBytes) expect(readBytesSync(/** @type {any} */ (lookupSync(cacheDir, e.key)))).not.toBeNull();
  await build(dist);
  expect((await precompress(dist, { cacheDir })).cache).toMatchObject({ hits: 10, misses: 0 });
});

test('two processes sharing one cache at the same time: both complete, every entry is whole, a third run takes all', async () => {
  // Same content in two output folders, compressed by two CLI processes started together.
  const [a, b, c] = ['a', 'b', 'c'].map((n) => path.join(tmp, n));
  const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}.js`, textOf(3000 + i * 300, i)]));
  await Promise.all([build(a, many), build(b, many), build(c, many)]);
  const [ra, rb] = await Promise.all([a, b].map((d) => cli([d, '--json', '--quiet', '--cache-dir', cacheDir, '--concurrency', '2'])));
  for (const r of [ra, rb]) expect(r).toMatchObject({ code: 0, stderr: '' });
  const [ja, jb] = [ra, rb].map((r) => JSON.parse(r.stdout));
  expect([ja.warnings, jb.warnings]).toEqual([[], []]);
  // Each variant was either encoded or taken from the other process's finished entry.
  expect(ja.cache.hits + ja.cache.misses).toBe(24);
  expect(jb.cache.hits + jb.cache.misses).toBe(24);
  expect(await expectIntact(a)).toBe(24);
  expect(await expectIntact(b)).toBe(24);
  const entries = entryFiles(cacheDir);
  expect(entries).toHaveLength(24);
  for (const file of entries) {
    const entry = lookupSync(cacheDir, path.basename(file));
    expect(entry).not.toBeNull();
    expect(readBytesSync(/** @type {any} */ (entry))).not.toBeNull();
  }
  expect(fsSync.readdirSync(cacheDir, { recursive: true }).map(String).filter((p) => p.endsWith('.pctmp'))).toEqual([]);
  const rc = JSON.parse((await cli([c, '--json', '--cache-dir', cacheDir])).stdout);
  expect(rc.cache).toMatchObject({ hits: 24, misses: 0 });
}, 180_000);

test('the cap evicts the least recently used entries at the end of a run', async () => {
  const [one, two] = ['one', 'two'].map((n) => path.join(tmp, n));
  const treeOne = { 'a.js': textOf(40_000, 11), 'b.css': textOf(30_000, 12) };
  const treeTwo = { 'c.js': textOf(40_000, 13), 'd.css': textOf(30_000, 14) };
  await build(one, treeOne);
  await precompress(one, { cacheDir });
  const sizeOne = (await info(cacheDir)).bytes;
  await build(two, treeTwo);
  await precompress(two, { cacheDir });
  // one's entries are used again (hits mark them as recently used), then a run that adds entries
  // with a cap that leaves room for about one site: two's, the least recently used, go.
  await build(one, treeOne);
  expect((await precompress(one, { cacheDir })).cache.hits).toBe(4);
  await build(one, { ...treeOne, 'e.txt': textOf(3000, 15) });
  await precompress(one, { cacheDir, cacheMaxSize: sizeOne + 4000 });
  const left = await info(cacheDir);
  expect(left.bytes).toBeLessThanOrEqual(sizeOne + 4000);
  await build(one, treeOne);
  expect((await precompress(one, { cacheDir })).cache).toMatchObject({ hits: 4, misses: 0 });
  await build(two, treeTwo);
  expect((await precompress(two, { cacheDir })).cache).toMatchObject({ hits: 0, misses: 4 });
});

test('a hit marks its entry used once per run: an entry used since the last run started keeps its mtime', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  await precompress(dist, { cacheDir });
  const old = new Date(2000, 0, 1);
  for (const f of entryFiles(cacheDir)) fsSync.utimesSync(f, old, old);
  await build(dist);
  expect((await precompress(dist, { cacheDir })).cache).toMatchObject({ hits: 10, misses: 0 });
  // Used by that run, and not since the run before it started: marked.
  const marked = new Map(entryFiles(cacheDir).map((f) => [f, fsSync.statSync(f).mtimeMs]));
  expect(marked.size).toBe(10);
  for (const t of marked.values()) expect(t).toBeGreaterThan(old.getTime());
  await build(dist);
  expect((await precompress(dist, { cacheDir })).cache).toMatchObject({ hits: 10, misses: 0 });
  // Used again: already marked since the last run started, so not marked again (no write to the cache).
  for (const [f, t] of marked) expect(fsSync.statSync(f).mtimeMs).toBe(t);
});

test('--no-cache neither reads nor writes the cache; --force re-encodes but refills it', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  const r = await cli([dist, '--no-cache', '--cache-dir', cacheDir, '--json']);
  expect(JSON.parse(r.stdout).cache).toMatchObject({ enabled: false, hits: 0, misses: 0 });
  expect(fsSync.existsSync(cacheDir)).toBe(false);

  await precompress(dist, { cacheDir, force: true });
  await build(dist);
  const off = await precompress(dist, { cacheDir, cache: false });
  expect(off.files).toMatchObject({ compressed: 4, fromCache: 0 });
  const forced = await precompress(dist, { cacheDir, force: true });
  expect(forced.cache).toMatchObject({ hits: 0, misses: 10 });
  await build(dist);
  expect((await precompress(dist, { cacheDir })).files).toMatchObject({ compressed: 0, fromCache: 4 });
});

test('a dry run does not touch the cache', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  const r = await precompress(dist, { cacheDir, dryRun: true });
  expect(r.cache.enabled).toBe(false);
  expect(fsSync.existsSync(cacheDir)).toBe(false);
});

test('precompressor cache info, prune and clear', async () => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  await cli([dist, '--cache-dir', cacheDir, '--quiet']);
  await build(dist);
  await cli([dist, '--cache-dir', cacheDir, '--quiet']);

  const i = await cli(['cache', 'info', '--cache-dir', cacheDir]);
  expect(i.code).toBe(0);
  expect(i.stdout).toContain(`precompressor cache: ${cacheDir}\n  10 entries, `);
  expect(i.stdout).toMatch(/ entries, [\d.]+ (?:B|KiB|MiB) \(cap 512 MiB\)\n/);
  expect(i.stdout).toMatch(/last run \(.+\): 10 of 10 outputs from the cache \(100\.0 % hit rate\), .+ of CPU saved/);
  const j = JSON.parse((await cli(['cache', 'info', '--cache-dir', cacheDir, '--json'])).stdout);
  expect(j).toMatchObject({ dir: cacheDir, entries: 10, lastRun: { hits: 10, misses: 0 } });

  const p = await cli(['cache', 'prune', '--cache-dir', cacheDir, '--cache-max-size', String(Math.floor(j.bytes / 2)), '--json']);
  expect(p.code).toBe(0);
  const pruned = JSON.parse(p.stdout);
  expect(pruned.removed).toBeGreaterThan(0);
  expect(pruned.bytes).toBeLessThanOrEqual(j.bytes / 2);

  await fs.writeFile(path.join(cacheDir, 'README.txt'), 'not ours');
  const c = await cli(['cache', 'clear', '--cache-dir', cacheDir]);
  expect(c).toMatchObject({ code: 0, stderr: '' });
  expect(c.stdout).toMatch(/^precompressor cache: \d+ entries removed/);
  expect(entryFiles(cacheDir)).toEqual([]);
  expect(fsSync.existsSync(path.join(cacheDir, 'README.txt'))).toBe(true); // only our entries go

  expect((await cli(['cache', 'bogus'])).code).toBe(2);
  const bad = await cli(['cache', 'prune', '--cache-max-size', 'lots']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/^precompressor: Expected --cache-max-size to be a size in bytes/);
  expect((await cli(['cache', '--help'])).stdout).toMatch(/info: entries, bytes, hit rate of the last run/);
});

test('a streamed variant whose file no longer holds what the encoder wrote is not stored (no entry with bytes of another source)', async () => {
  const variant = path.join(tmp, 'v.br');
  await fs.mkdir(tmp, { recursive: true });
  await fs.writeFile(variant, 'bytes another writer put there');
  const crypto = await import('node:crypto');
  const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');
  await storeFile(cacheDir, 'a'.repeat(64), variant, 5, { size: 9, sha256: sha('what we wrote') });
  expect(lookupSync(cacheDir, 'a'.repeat(64))).toBeNull();
  await storeFile(cacheDir, 'b'.repeat(64), variant, 5, { size: 30, sha256: sha('bytes another writer put there') });
  const entry = /** @type {any} */ (lookupSync(cacheDir, 'b'.repeat(64)));
  expect(readBytesSync(entry)?.toString()).toBe('bytes another writer put there');
});

test('a run far under the cap, or the run that began the cache, adds its bytes to the size known instead of scanning every entry', async () => {
  const dist = path.join(tmp, 'dist');
  const lastRun = async () => JSON.parse(await fs.readFile(path.join(cacheDir, 'last-run.json'), 'utf8'));
  await build(dist, { 'a.js': textOf(6000, 21) });
  await precompress(dist, { cacheDir });
  // A cache the run began holds what it wrote: no scan either (a scan would say runsSinceScan 0).
  expect(await lastRun()).toMatchObject({ runsSinceScan: 1, bytes: (await info(cacheDir)).bytes });
  await build(dist, { 'a.js': textOf(6000, 21), 'b.css': textOf(5000, 22) });
  await precompress(dist, { cacheDir });
  // Estimated, not scanned: and the estimate is the cache's real size.
  expect(await lastRun()).toMatchObject({ runsSinceScan: 2, bytes: (await info(cacheDir)).bytes });
});
