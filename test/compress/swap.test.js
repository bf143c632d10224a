import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { pass, precompress } from '../../lib/compress/pass/precompress.js';
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

// The instant between the check of a folder and the rename or unlink in it (#27, item 9): the swap
// is made right there, by the first rename (or unlink) into `uploads/`, just before it runs. On Linux
// the folder is held open and the rename or unlink goes through /proc/self/fd: it lands in the held
// folder whatever its path leads to since.
const procFd = process.platform === 'linux' && fsSync.existsSync('/proc/self/fd');
const onLinux = procFd ? test : test.skip;
if (!procFd) console.warn('swap race tests skipped: no /proc/self/fd here (the path check, tested above, is what holds)');

/** Is `dest` in `uploads/`, by its path or through a folder held open there? */
function inUploads(dest) {
  if (!dest.startsWith('/proc/self/fd/')) return dest.includes(`${path.sep}uploads${path.sep}`);
  try {
    return fsSync.readlinkSync(dest.split('/').slice(0, 5).join('/')).endsWith(`${path.sep}uploads`);
  } catch {
    return false;
  }
}

/**
 * Patch `obj[name]` (a rename or unlink of node:fs) so that the first call whose destination is in
 * `uploads/` (by its path, or through a held folder) swaps the folder just before it runs.
 */
function swapBefore(obj, name) {
  const real = obj[name];
  let done = false;
  obj[name] = function (...args) {
    const dest = String(args[name.startsWith('rename') ? 1 : 0]);
    if (!done && inUploads(dest)) {
      done = true;
      swap();
    }
    return real.apply(this, args);
  };
  return () => {
    obj[name] = real;
    return done;
  };
}

describe('the instant between the check and the rename or unlink (#27, item 9)', () => {
  onLinux('a streamed variant renamed just after its folder was swapped lands in the folder, not outside', async () => {
    await setUp(true);
    const before = snapshot(outside);
    const restore = swapBefore(fsSync.promises, 'rename');
    try {
      await pass(root, { streamThreshold: 100_000 }, new Set());
    } finally {
      expect(restore()).toBe(true);
    }
    expect(snapshot(outside)).toEqual(before);
    expect(zlib.gunzipSync(fsSync.readFileSync(path.join(root, 'uploads-was', 'big.txt.gz'))).toString()).toBe(textOf(300_000, 5));
  });

  onLinux('a variant taken from the cache on the main thread: the same', async () => {
    await setUp(true);
    await precompress(root);
    for (const n of NAMES) for (const s of ['.br', '.gz']) fsSync.rmSync(path.join(root, 'uploads', n + s));
    fsSync.rmSync(path.join(root, 'precompressor-manifest.json'));
    const before = snapshot(outside);
    const restore = swapBefore(fsSync, 'renameSync');
    try {
      await pass(root, {}, new Set());
    } finally {
      expect(restore()).toBe(true);
    }
    expect(snapshot(outside)).toEqual(before);
  });

  onLinux('a stale variant removed just after its folder was swapped: the outside file of that name stays', async () => {
    await setUp(true);
    await precompress(root);
    for (const n of NAMES) fsSync.rmSync(path.join(root, 'uploads', n));
    const before = snapshot(outside);
    const restore = swapBefore(fsSync.promises, 'unlink');
    try {
      await pass(root, {}, new Set());
    } finally {
      expect(restore()).toBe(true);
    }
    expect(snapshot(outside)).toEqual(before);
  });
});
