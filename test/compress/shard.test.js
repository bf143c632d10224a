import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { sliceOf } from '../../lib/compress/plan/shard.js';
import { parseShard, normalizeOptions } from '../../lib/options.js';
import { splitWatchOptions } from '../../lib/watch/watch-options.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { runCommand } from '../helpers/spawn.js';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));

// --shard i/n: the slices are the same on every machine, balanced by work, together every file
// once; shards write the cache and no manifest; a final run on a third machine, sharing only the
// cache folder, takes every variant from it and makes the manifest.

/** Builds of a few machines each, on a loaded 2-core machine: more than the default 60 s. */
const SLOW = 240_000;
/** A site dictionary is made only where Node has a dictionary encoder (none on 22.12): one file more then. */
const SITE_DICT = deltaEncoders().length > 0 ? 1 : 0;
if (!SITE_DICT) console.warn(`shard tests: no site dictionary checks, Node ${process.version} has no zstd or Brotli dictionary encoder`);

let tmp;
beforeEach(async () => {
  tmp = await tempDir('pc-shard-');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A site with files of very different sizes (the work is far from the file count), and 40 pages. */
async function writeMixed(dir) {
  await writeSite(dir, 40);
  await writeTree(dir, {
    'assets/big.js': textOf(400_000, 1),
    'assets/mid.css': textOf(120_000, 2),
    'photo.png': noiseOf(3000), // skipped (compressed format): in no slice
  });
}

describe('parseShard()', () => {
  test('reads "<i>/<n>" and refuses the rest', () => {
    expect(parseShard('1/2')).toEqual({ index: 1, count: 2 });
    expect(parseShard(' 3 / 3 ')).toEqual({ index: 3, count: 3 });
    for (const bad of ['0/2', '3/2', '1/0', '1', '1/2/3', 'a/b', '', '-1/2', '1/20000', 2]) expect(parseShard(bad)).toBeNull();
  });

  test('the option is validated, and needs the cache', () => {
    expect(normalizeOptions('x', { shard: '2/4' }).shard).toEqual({ index: 2, count: 4 });
    expect(normalizeOptions('x').shard).toBeNull();
    expect(() => normalizeOptions('x', { shard: '5/4' })).toThrow(/Expected options\.shard to be a slice/);
    expect(() => normalizeOptions('x', { shard: '1/2', cache: false })).toThrow(/options\.shard .*cache on/);
    expect(() => normalizeOptions('x', { shard: '1/2', dryRun: true })).toThrow(/options\.shard/);
    expect(() => splitWatchOptions({ shard: '1/2' })).toThrow(/Expected options\.shard to be unset in watch mode/);
  });
});

describe('sliceOf()', () => {
  const files = Array.from({ length: 50 }, (_, i) => ({ rel: `f${i}`, cost: ((i * 7919) % 97) + 1 }));
  const cost = (/** @type {{ cost: number }} */ f) => f.cost;

  test('the slices partition the files, whatever their order', () => {
    const shuffled = [...files].reverse();
    const seen = new Set();
    for (let i = 1; i <= 3; i++) {
      const a = sliceOf(files, cost, { index: i, count: 3 });
      const b = sliceOf(shuffled, cost, { index: i, count: 3 });
      expect(a.files.map((f) => f.rel).sort()).toEqual(b.files.map((f) => f.rel).sort());
      for (const f of a.files) {
        expect(seen.has(f.rel)).toBe(false);
        seen.add(f.rel);
      }
    }
    expect(seen.size).toBe(files.length);
  });

  test('balanced by work, not by count: one big file is a slice of its own', () => {
    const skewed = [{ rel: 'big', cost: 1000 }, ...Array.from({ length: 10 }, (_, i) => ({ rel: `s${i}`, cost: 100 }))];
    const one = sliceOf(skewed, cost, { index: 1, count: 2 });
    const two = sliceOf(skewed, cost, { index: 2, count: 2 });
    expect(one.files.map((f) => f.rel)).toEqual(['big']);
    expect(two.files).toHaveLength(10);
    expect(one.share + two.share).toBeCloseTo(1);
    expect(sliceOf([], cost, { index: 1, count: 2 })).toEqual({ files: [], work: 0, share: 1 });
  });
});

describe('shards on machines that share only the cache folder', () => {
  test('two shards take a fair part each; a third machine compresses nothing and writes the manifest', async () => {
    const cacheDir = path.join(tmp, 'shared-cache');
    const machine = async (name) => {
      const dir = path.join(tmp, name, 'dist');
      await writeMixed(dir);
      return dir;
    };
    const common = { cacheDir, concurrency: 2, dictionaryStore: path.join(tmp, 'store') };
    const a = await machine('a');
    const b = await machine('b');
    const ra = await precompress(a, { ...common, shard: '1/2' });
    const rb = await precompress(b, { ...common, shard: '2/2' });
    for (const [r, dir] of [[ra, a], [rb, b]]) {
      expect(r.ok).toBe(true);
      // Each within 50 ± 15 % of the work; together every file to compress, once.
      expect(r.shard.share).toBeGreaterThanOrEqual(0.35);
      expect(r.shard.share).toBeLessThanOrEqual(0.65);
      expect(r.shard.of).toBe(42);
      await expect(fs.stat(path.join(dir, 'precompressor-manifest.json'))).rejects.toThrow(/ENOENT/);
      expect(r.deltas.written).toBe(0);
      expect(r.siteDictionary.path).toBeNull();
    }
    expect(ra.shard.files + rb.shard.files).toBe(42);
    expect(ra.files.compressed + rb.files.compressed).toBe(42);
    expect(ra.shard.share + rb.shard.share).toBeCloseTo(1);

    const c = await machine('c');
    const rc = await precompress(c, common);
    expect(rc.ok).toBe(true);
    expect(rc.files.compressed).toBe(0);
    expect(rc.files.fromCache).toBe(42);
    const manifest = JSON.parse(await fs.readFile(path.join(c, 'precompressor-manifest.json'), 'utf8'));
    expect(Object.keys(manifest.files)).toHaveLength(43 + SITE_DICT); // and the site dictionary where one is made
    if (SITE_DICT) {
      expect(manifest.siteDictionary).toBeDefined();
      expect(rc.siteDictionary.pages).toBe(40);
    } else {
      expect(rc.siteDictionary.path).toBeNull();
    }
    for (const [rel, e] of Object.entries(manifest.files)) {
      const src = await fs.readFile(path.join(c, rel));
      if (e.variants.br) expect(zlib.brotliDecompressSync(await fs.readFile(path.join(c, `${rel}.br`)))).toEqual(src);
      if (e.variants.gzip) expect(zlib.gunzipSync(await fs.readFile(path.join(c, `${rel}.gz`)))).toEqual(src);
    }
  }, SLOW);

  test('a shard run ignores the manifest of an earlier run on its folder: its whole slice goes to the cache', async () => {
    const dir = path.join(tmp, 'dist');
    await writeMixed(dir);
    await precompress(dir, { cacheDir: path.join(tmp, 'first'), concurrency: 2 });
    const r = await precompress(dir, { cacheDir: path.join(tmp, 'second'), concurrency: 2, shard: '1/1' });
    expect(r.files.unchanged).toBe(0);
    // The first run's site dictionary (where this Node makes one) is a file of the folder now.
    expect(r.files.compressed).toBe(42 + SITE_DICT);
    expect(r.shard).toEqual({ index: 1, count: 1, files: 42 + SITE_DICT, of: 42 + SITE_DICT, share: 1 });
  }, SLOW);
});

test('the CLI: --shard says what it did and writes no manifest; a bad slice is a usage error', async () => {
  const dir = path.join(tmp, 'dist');
  await writeMixed(dir);
  const cacheDir = path.join(tmp, 'cache');
  const r = await runCommand(process.execPath, [BIN, dir, '--shard', '2/2', '--cache-dir', cacheDir]);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/shard 2\/2: \d+ of 42 files to compress, \d+\.\d% of the work; into the cache only/);
  await expect(fs.stat(path.join(dir, 'precompressor-manifest.json'))).rejects.toThrow(/ENOENT/);
  const bad = await runCommand(process.execPath, [BIN, dir, '--shard', '3/2']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/Expected --shard to be a slice "<i>\/<n>"/);
}, SLOW);
