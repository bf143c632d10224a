import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pass, precompress } from '../../lib/compress/precompress.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// A folder swapped for a symlink during a run (#17, item 2): an upload folder that another user
// can write, compressed by a privileged job. After the walk, `uploads/` becomes a symlink to a
// folder outside the tree; nothing outside may be read into the output, written, or removed.

let tmp;
let root;
let outside;
beforeEach(async () => {
  tmp = await tempDir('pc-swap-');
  root = path.join(tmp, 'site');
  outside = path.join(tmp, 'outside');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const NAMES = ['a.txt', 'b.txt', 'c.txt', 'big.txt'];

/** Every file of a folder with its bytes, recursively. */
function snapshot(dir) {
  const out = {};
  for (const rel of fsSync.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const abs = path.join(dir, rel);
    if (fsSync.lstatSync(abs).isFile()) out[rel] = fsSync.readFileSync(abs).toString('base64');
  }
  return out;
}

/** Swap `uploads/` for a symlink to the outside folder. */
function swap() {
  fsSync.renameSync(path.join(root, 'uploads'), path.join(root, 'uploads-was'));
  fsSync.symlinkSync(outside, path.join(root, 'uploads'));
}

async function setUp(withPlanted) {
  await writeTree(root, { 'index.html': textOf(4000, 1), ...Object.fromEntries(NAMES.map((n, i) => [`uploads/${n}`, textOf(n === 'big.txt' ? 300_000 : 5000, i + 2)])) });
  const planted = Object.fromEntries(NAMES.map((n) => [n, `the outside file ${n}, which must not be read or written`]));
  if (withPlanted) for (const n of NAMES) Object.assign(planted, { [`${n}.br`]: `outside ${n}.br`, [`${n}.gz`]: `outside ${n}.gz` });
  await writeTree(outside, planted);
}

test.each([
  ['in workers', {}],
  ['streamed', { streamThreshold: 100_000 }],
  ['from the cache', { fromCache: true }],
])('a folder swapped for a symlink after the walk: nothing outside is read, written or removed (%s)', async (_label, extra) => {
  await setUp(false);
  const { fromCache, ...opts } = /** @type {any} */ (extra);
  if (fromCache) {
    await precompress(root, opts); // fills the cache with the real files' variants
    for (const n of NAMES) for (const s of ['.br', '.gz']) fsSync.rmSync(path.join(root, 'uploads', n + s));
    fsSync.rmSync(path.join(root, 'precompressor-manifest.json'));
  }
  const before = snapshot(outside);
  const { report } = await pass(root, opts, new Set(), { afterWalk: swap });
  expect(snapshot(outside)).toEqual(before);
  expect(report.failures.map((f) => f.path).sort()).toEqual(NAMES.map((n) => `uploads/${n}`).sort());
  for (const f of report.failures) expect(f.message).toMatch(/not the file the walk found|a folder on its path was replaced by a symlink/);
  // The rest of the site is compressed; the manifest lists nothing of the swapped folder.
  expect(zlib.brotliDecompressSync(fsSync.readFileSync(path.join(root, 'index.html.br'))).toString()).toBe(textOf(4000, 1));
  const m = JSON.parse(fsSync.readFileSync(path.join(root, 'precompressor-manifest.json'), 'utf8'));
  expect(Object.keys(m.files)).toEqual(['index.html']);
});

test('variants to remove behind a swapped folder are not removed', async () => {
  await setUp(true);
  await precompress(root);
  // The sources go: their variants are orphans that the next run removes.
  for (const n of NAMES) fsSync.rmSync(path.join(root, 'uploads', n));
  const before = snapshot(outside);
  const { report } = await pass(root, {}, new Set(), { afterWalk: swap });
  expect(snapshot(outside)).toEqual(before);
  expect(report.failures.length).toBeGreaterThan(0);
  for (const f of report.failures) expect(f.message).toMatch(/a folder on its path was replaced by a symlink/);
});

test('a file replaced by rename after the walk (as bundlers write) is read as it is now, not failed', async () => {
  await setUp(false);
  const replace = () => {
    const p = path.join(root, 'uploads', 'a.txt');
    fsSync.writeFileSync(`${p}.new`, textOf(6000, 42));
    fsSync.renameSync(`${p}.new`, p);
  };
  const { report } = await pass(root, {}, new Set(), { afterWalk: replace });
  expect(report.failures).toEqual([]);
  expect(zlib.gunzipSync(fsSync.readFileSync(path.join(root, 'uploads', 'a.txt.gz'))).toString()).toBe(textOf(6000, 42));
});
