import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn, spawnSync } from 'node:child_process';
import { pass, precompress } from '../../lib/compress/pass/precompress.js';
import { onThisThread } from '../../lib/compress/pass/cache-first.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';

const decoders = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync };
const suffix = { br: '.br', gzip: '.gz' };
const readManifest = async (root) => JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));
const exists = (p) => fs.access(p).then(() => true, () => false);

/** Every variant the manifest lists exists, has the recorded size and decodes to its original. */
async function expectConsistent(root) {
  const m = await readManifest(root);
  for (const [rel, e] of Object.entries(m.files)) {
    const original = await fs.readFile(path.join(root, rel));
    expect(original.length).toBe(e.size);
    for (const [enc, v] of Object.entries(e.variants)) {
      const data = await fs.readFile(path.join(root, rel + suffix[enc]));
      expect(data.length).toBe(v.size);
      expect(data.length).toBeLessThan(original.length);
      expect(Buffer.compare(decoders[enc](data), original)).toBe(0);
    }
  }
  return m;
}

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const site = () => ({
  'index.html': `<!doctype html><title>t</title>${textOf(5000)}`,
  'assets/app.js': textOf(200_000, 3),
  'assets/style.css': textOf(8000, 5),
  'img/logo.png': noiseOf(3000),
  'data/random.bin': noiseOf(4096, 11),
  'empty.txt': '',
  'tiny.txt': 'a',
  'dir with space/ünïcødé file.svg': `<svg>${textOf(3000, 9)}</svg>`,
});

test('every eligible file gets .br and .gz that decode to it byte for byte', async () => {
  await writeTree(root, site());
  const report = await precompress(root);
  expect(report.ok).toBe(true);
  const m = await expectConsistent(root);
  expect(Object.keys(m.files)).toEqual([
    'assets/app.js', 'assets/style.css', 'data/random.bin', 'dir with space/ünïcødé file.svg', 'empty.txt', 'img/logo.png', 'index.html', 'tiny.txt',
  ]);
  expect(Object.keys(m.files['assets/app.js'].variants)).toEqual(['br', 'gzip']);
  expect(Object.keys(m.files['dir with space/ünïcødé file.svg'].variants)).toEqual(['br', 'gzip']);
  expect(m.files['img/logo.png']).toMatchObject({ variants: {}, skipped: 'compressed-format' });
  expect(m.files['data/random.bin']).toMatchObject({ variants: {}, skipped: 'not-smaller' });
  expect(m.files['empty.txt']).toMatchObject({ variants: {}, skipped: 'empty', size: 0 });
  expect(m.files['tiny.txt']).toMatchObject({ variants: {}, skipped: 'not-smaller' });
  expect(m.files['assets/app.js'].hash).toMatch(/^sha256-[A-Za-z0-9_-]{43}$/);
  expect(m.schema).toBe(3);
  expect(m.settings).toMatchObject({ encodings: ['br', 'gzip'], brotliQuality: 11, gzipLevel: 9, minRatio: 1 });
  expect(await exists(path.join(root, 'img/logo.png.br'))).toBe(false);
  expect(await exists(path.join(root, 'data/random.bin.gz'))).toBe(false);
  expect(report.files).toMatchObject({ scanned: 8, compressed: 4, compressedFormat: 1, notSmaller: 2, empty: 1, failed: 0 });
  expect(report.bytes.br).toBe(Object.values(m.files).reduce((n, e) => n + (e.variants.br?.size ?? 0), 0));
});

test('a warm re-run rewrites nothing; one changed file is recompressed alone', async () => {
  await writeTree(root, site());
  await precompress(root);
  // Every file of the tree (sources, variants, manifest): mtime and inode.
  const statsOf = async () => {
    const out = {};
    for (const rel of await fs.readdir(root, { recursive: true })) {
      const s = await fs.stat(path.join(root, rel));
      if (s.isFile()) out[rel] = [s.mtimeMs, s.ino];
    }
    return out;
  };
  const before = await statsOf();
  const warm = await precompress(root);
  expect(warm.changes).toEqual([]);
  expect(warm.files.compressed).toBe(0);
  expect(await statsOf()).toEqual(before);

  await fs.writeFile(path.join(root, 'assets/style.css'), textOf(9000, 6));
  const third = await precompress(root);
  expect(third.changes).toEqual([{ path: 'assets/style.css', action: 'compress' }]);
  await expectConsistent(root);

  // Touched but identical content: only the record is updated.
  const t = new Date(Date.now() + 5000);
  await fs.utimes(path.join(root, 'index.html'), t, t);
  const fourth = await precompress(root);
  expect(fourth.changes).toEqual([]);
  expect((await readManifest(root)).files['index.html'].mtimeMs).toBe((await fs.stat(path.join(root, 'index.html'))).mtimeMs);
});

test('stale variants are removed: source deleted, now excluded, no longer smaller; a variant rewritten by someone else is kept as theirs', async () => {
  await writeTree(root, site());
  await precompress(root);
  await fs.rm(path.join(root, 'assets/style.css'));
  await fs.writeFile(path.join(root, 'index.html'), noiseOf(5000, 99));
  await fs.writeFile(path.join(root, 'dir with space/ünïcødé file.svg.gz'), 'garbage');
  const r = await precompress(root, { exclude: ['assets/*.js'] });
  expect(r.ok).toBe(true);
  for (const gone of ['assets/style.css.br', 'assets/style.css.gz', 'assets/app.js.br', 'assets/app.js.gz', 'index.html.br', 'index.html.gz']) {
    expect(await exists(path.join(root, gone))).toBe(false);
  }
  const m = await expectConsistent(root);
  expect(m.files['assets/style.css']).toBeUndefined();
  expect(m.files['assets/app.js']).toMatchObject({ skipped: 'excluded', variants: {} });
  expect(m.files['index.html']).toMatchObject({ skipped: 'not-smaller', variants: {} });
  // Not what precompressor wrote (size and date): a file of the user's, kept and listed as itself.
  expect(Object.keys(m.files['dir with space/ünïcødé file.svg'].variants)).toEqual(['br']);
  expect(await fs.readFile(path.join(root, 'dir with space/ünïcødé file.svg.gz'), 'utf8')).toBe('garbage');
  expect(m.files['dir with space/ünïcødé file.svg.gz']).toMatchObject({ size: 7, skipped: 'compressed-format' });
  expect(r.warnings.map((w) => w.path)).toEqual(['dir with space/ünïcødé file.svg.gz']);
});

test('held files (watch mode: still being written) are left exactly as the previous pass left them', async () => {
  await writeTree(root, { 'a.js': textOf(50_000, 1), 'c.txt': textOf(9000, 2), 'd.js': textOf(20_000, 4) });
  await precompress(root);
  const before = await readManifest(root);
  const variantsOf = async (rel) => Promise.all(['.br', '.gz'].map(async (s) => {
    const p = path.join(root, rel + s);
    return (await exists(p)) ? { bytes: await fs.readFile(p), mtimeMs: (await fs.stat(p)).mtimeMs } : null;
  }));
  const aVariants = await variantsOf('a.js');
  // a.js is half rewritten, n.js half written, d.js lost its .gz while it is written; c.txt changed and settled.
  await fs.writeFile(path.join(root, 'a.js'), textOf(7000, 5));
  await fs.writeFile(path.join(root, 'n.js'), textOf(6000, 6));
  await fs.writeFile(path.join(root, 'd.js'), textOf(3000, 7));
  await fs.rm(path.join(root, 'd.js.gz'));
  await fs.writeFile(path.join(root, 'c.txt'), textOf(12_000, 8));
  // exclude would make a.js's variants stale, if a.js were not held.
  const { report, held } = await pass(root, { exclude: ['a.js'] }, new Set(['a.js', 'n.js', 'd.js']));
  expect(report.ok).toBe(true);
  expect(report.failures).toEqual([]);
  expect(held.sort()).toEqual(['a.js', 'd.js', 'n.js']);
  expect(report.changes).toEqual([{ path: 'c.txt', action: 'compress' }, { path: 'd.js.br', action: 'remove (stale)' }]);
  const m = await readManifest(root);
  expect(m.files['a.js']).toEqual(before.files['a.js']);
  expect(await variantsOf('a.js')).toEqual(aVariants); // same bytes, never rewritten
  expect(m.files['n.js']).toBeUndefined();
  expect(await variantsOf('n.js')).toEqual([null, null]);
  // d.js's entry no longer described its variants: no entry, and the .br nothing records is gone.
  expect(m.files['d.js']).toBeUndefined();
  expect(await variantsOf('d.js')).toEqual([null, null]);
  expect(m.files['c.txt'].size).toBe(12_000);

  // Once they settle, the next pass compresses them like any changed file.
  const next = await precompress(root);
  // (a deploy delta of the rewritten a.js against its previous version may come too, where Node can make one)
  expect(next.changes.filter((c) => !c.action.startsWith('delta'))).toEqual(['a.js', 'd.js', 'n.js'].map((p) => ({ path: p, action: 'compress' })));
  const after = await expectConsistent(root);
  expect(Object.keys(after.files)).toEqual(['a.js', 'c.txt', 'd.js', 'n.js']);
});

test('settings are part of the cache key', async () => {
  await writeTree(root, { 'a.js': textOf(50_000) });
  await precompress(root);
  const r = await precompress(root, { brotliQuality: 5 });
  expect(r.changes).toEqual([{ path: 'a.js', action: 'compress' }]);
  expect((await readManifest(root)).settings.brotliQuality).toBe(5);
  await expectConsistent(root);
});

test('dry run reports what would change and writes nothing', async () => {
  await writeTree(root, site());
  const r = await precompress(root, { dryRun: true });
  expect(r.dryRun).toBe(true);
  expect(r.changes.filter((c) => c.action === 'compress').map((c) => c.path)).toContain('assets/app.js');
  expect(await exists(path.join(root, 'precompressor-manifest.json'))).toBe(false);
  expect(await exists(path.join(root, 'assets/app.js.br'))).toBe(false);
});

test('big files are streamed and still round-trip (low streamThreshold)', async () => {
  await writeTree(root, { 'big.json': textOf(3_000_000, 4), 'noise.bin': noiseOf(200_000) });
  const r = await precompress(root, { streamThreshold: 64 * 1024 });
  expect(r.ok).toBe(true);
  const m = await expectConsistent(root);
  expect(Object.keys(m.files['big.json'].variants)).toEqual(['br', 'gzip']);
  expect(m.files['noise.bin'].skipped).toBe('not-smaller');
  const again = await precompress(root, { streamThreshold: 64 * 1024 });
  expect(again.changes).toEqual([]);
});

test('symlinks: inside the folder are taken, outside are refused; dotfiles skipped by default', async () => {
  const outside = await tempDir();
  try {
    await writeTree(outside, { 'secret.txt': textOf(4000) });
    await writeTree(root, { 'real.js': textOf(4000), '.env': textOf(4000), '.hidden/x.js': textOf(4000) });
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'leak.txt'));
    await fs.symlink(outside, path.join(root, 'leakdir'));
    await fs.symlink('real.js', path.join(root, 'alias.js'));
    const r = await precompress(root);
    const m = await readManifest(root);
    expect(Object.keys(m.files).sort()).toEqual(['alias.js', 'real.js']);
    expect(r.warnings.map((w) => w.path)).toEqual(['leak.txt', 'leakdir']);
    expect(await exists(path.join(outside, 'secret.txt.br'))).toBe(false);
    const withDot = await precompress(root, { dotfiles: true });
    expect(Object.keys((await readManifest(root)).files).sort()).toEqual(['.env', '.hidden/x.js', 'alias.js', 'real.js']);
    expect(withDot.ok).toBe(true);
  } finally {
    await fs.rm(outside, { recursive: true, force: true });
  }
});

test('a symlink alias of a dotfile (env.txt → .env) is a dotfile: not listed nor compressed unless dotfiles', async () => {
  await writeTree(root, { 'real.js': textOf(4000), '.env': textOf(4000), '.config/app.json': textOf(4000) });
  await fs.symlink('.env', path.join(root, 'env.txt'));
  await fs.symlink('.config/app.json', path.join(root, 'app.json'));
  await precompress(root);
  expect(Object.keys((await readManifest(root)).files)).toEqual(['real.js']);
  expect(await exists(path.join(root, 'env.txt.br'))).toBe(false);
  await precompress(root, { dotfiles: true });
  expect(Object.keys((await readManifest(root)).files).sort()).toEqual(['.config/app.json', '.env', 'app.json', 'env.txt', 'real.js']);
});

test('a failure on one file is reported with its path and does not touch the others', async () => {
  await writeTree(root, { 'ok.js': textOf(4000), 'bad.js': textOf(4000, 2) });
  await fs.mkdir(path.join(root, 'bad.js.br', 'blocker'), { recursive: true }); // rename onto a non-empty folder fails
  const r = await precompress(root);
  expect(r.ok).toBe(false);
  expect(r.failures).toEqual([expect.objectContaining({ path: 'bad.js' })]);
  expect(r.failures[0].message).toMatch(/bad\.js\.br/);
  const m = await readManifest(root);
  expect(m.files['bad.js']).toBeUndefined();
  expect(Object.keys(m.files['ok.js'].variants)).toEqual(['br', 'gzip']);
  expect(await exists(path.join(root, 'bad.js.gz'))).toBe(false);
  expect((await fs.readdir(root)).filter((n) => n.endsWith('.pctmp'))).toEqual([]);
});

test('leftover temp files of a killed run are swept, those of a running one are not; a corrupt manifest is replaced', async () => {
  const dead = spawnSync(process.execPath, ['-e', '0']).pid; // has exited
  const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  const exited = new Promise((resolve) => live.once('exit', resolve));
  try {
    await writeTree(root, {
      'a.js': textOf(4000), 'precompressor-manifest.json': '{"schema":1,',
      [`.a.js.br.${dead}-abc.pctmp`]: 'partial', [`.precompressor-${dead}-0a1b.pctmp/w1/1-1`]: 'partial',
      [`.b.js.br.${live.pid}-abc.pctmp`]: 'being written', [`.precompressor-${live.pid}-0a1b.pctmp/w1/1-1`]: 'being written',
    });
    const r = await precompress(root);
    expect(r.warnings[0].message).toMatch(/not valid JSON/);
    expect(await exists(path.join(root, `.a.js.br.${dead}-abc.pctmp`))).toBe(false);
    expect(await exists(path.join(root, `.precompressor-${dead}-0a1b.pctmp`))).toBe(false);
    expect(await exists(path.join(root, `.b.js.br.${live.pid}-abc.pctmp`))).toBe(true);
    expect(await exists(path.join(root, `.precompressor-${live.pid}-0a1b.pctmp/w1/1-1`))).toBe(true);
  } finally {
    live.kill();
  }
  await exited;
  await precompress(root); // its owner gone now: swept
  expect((await fs.readdir(root)).filter((n) => n.endsWith('.pctmp'))).toEqual([]);
  await expectConsistent(root);
});

test('file names that are also names of Object.prototype members survive warm runs', async () => {
  await writeTree(root, { 'a.js': textOf(4000) });
  await precompress(root);
  await writeTree(root, { constructor: textOf(3000, 2), ['__proto__']: textOf(3000, 3), 'toString.js': textOf(3000, 4) });
  const second = await precompress(root);
  expect(second.failures).toEqual([]);
  expect(second.changes.map((c) => c.path).sort()).toEqual(['__proto__', 'constructor', 'toString.js']);
  const third = await precompress(root);
  expect(third.changes).toEqual([]);
  await expectConsistent(root);
});

test('a missing folder or a file given as folder is a clear error', async () => {
  await expect(precompress(path.join(root, 'nope'))).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_DIR', message: expect.stringMatching(/does not exist/) });
  await writeTree(root, { 'f.txt': 'x' });
  await expect(precompress(path.join(root, 'f.txt'))).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_DIR', message: expect.stringMatching(/not a directory/) });
});

test('the manifest can live elsewhere and is never taken as an input', async () => {
  await writeTree(root, { 'site/a.js': textOf(4000) });
  const manifest = path.join(root, 'out', 'm.json');
  await fs.mkdir(path.dirname(manifest));
  await precompress(path.join(root, 'site'), { manifest });
  const m = JSON.parse(await fs.readFile(manifest, 'utf8'));
  expect(Object.keys(m.files)).toEqual(['a.js']);
  await precompress(path.join(root, 'site'));
  const inside = await readManifest(path.join(root, 'site'));
  expect(Object.keys(inside.files)).toEqual(['a.js']);
  await precompress(path.join(root, 'site'));
  expect(Object.keys((await readManifest(path.join(root, 'site'))).files)).toEqual(['a.js']);
});

test('a dry run on a compressed tree changes nothing, though a source changed and one is gone', async () => {
  await writeTree(root, site());
  await precompress(root);
  await fs.rm(path.join(root, 'assets/style.css'));
  await fs.writeFile(path.join(root, 'index.html'), textOf(6000, 12));
  const snapshot = async () => {
    const out = {};
    for (const rel of (await fs.readdir(root, { recursive: true })).sort()) {
      const s = await fs.stat(path.join(root, rel));
      if (s.isFile()) out[rel] = [s.mtimeMs, s.ino, s.size];
    }
    return out;
  };
  const before = await snapshot();
  const manifestBefore = await fs.readFile(path.join(root, 'precompressor-manifest.json'));
  const r = await precompress(root, { dryRun: true });
  expect(r.changes).toEqual([
    { path: 'assets/style.css.br', action: 'remove (orphan)' },
    { path: 'assets/style.css.gz', action: 'remove (orphan)' },
    { path: 'index.html', action: 'compress' },
  ]);
  expect(await snapshot()).toEqual(before);
  expect(Buffer.compare(await fs.readFile(path.join(root, 'precompressor-manifest.json')), manifestBefore)).toBe(0);
});

test('the most expensive work runs first (one worker: the pool starts the tasks in decreasing size order)', async () => {
  // large enough for the pool even with one worker (a smaller pass is done without workers: see below)
  await writeTree(root, { 'small.js': textOf(2000, 1), 'large.js': textOf(1_100_000, 2), 'medium.js': textOf(30_000, 3) });
  const started = [];
  const opts = { concurrency: 1, encodings: ['br'], brotliQuality: 1 };
  await pass(root, opts, new Set(), { onJobStart: (task) => started.push(path.basename(task.abs)) });
  expect(started).toEqual(['large.js', 'medium.js', 'small.js']);
});

test('a pass smaller than the workers\' start-up is done without them, cold or warm', async () => {
  const files = { 'a.js': textOf(20_000, 1), 'b.css': textOf(8000, 2), 'c.html': textOf(3000, 3) };
  await writeTree(root, files);
  const onWorker = [];
  const r = await pass(root, {}, new Set(), { onJobStart: (task) => onWorker.push(task.rel) });
  expect(r.report.files).toMatchObject({ compressed: 3 });
  expect(onWorker).toEqual([]);
  for (const [rel, text] of Object.entries(files)) {
    expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, `${rel}.br`))).toString()).toBe(text);
    expect(zlib.gunzipSync(await fs.readFile(path.join(root, `${rel}.gz`))).toString()).toBe(text);
  }
});

test('a small build writes its temps beside their targets: no run temp folder is made (#31)', async () => {
  const files = { 'a.js': textOf(20_000, 1), 'b.css': textOf(8000, 2) };
  await writeTree(root, files);
  const cacheDir = await tempDir();
  /** @type {string[]} */
  const names = [];
  let manifestWritten;
  const seen = new Promise((resolve) => { manifestWritten = resolve; });
  // inotify reports a folder's events in order: the manifest's rename comes after every variant's.
  const watcher = fsSync.watch(root, (_event, name) => {
    names.push(String(name));
    if (name === 'precompressor-manifest.json') manifestWritten();
  });
  try {
    const r = await precompress(root, { cacheDir });
    expect(r.files).toMatchObject({ compressed: 2 });
    await seen;
  } finally {
    watcher.close();
    await fs.rm(cacheDir, { recursive: true, force: true });
  }
  expect(names.filter((n) => /^\.precompressor-\d+-[0-9a-f]+\.pctmp/.test(n))).toEqual([]);
  expect(names.some((n) => /^\.a\.js\.br\.\d+-[0-9a-f]+\.pctmp$/.test(n))).toBe(true);
  expect((await fs.readdir(root)).filter((n) => n.endsWith('.pctmp'))).toEqual([]);
  await expectConsistent(root);
});

test('one big file among small ones is done on this thread, announced as running; two are shared by the workers', async () => {
  // On two workers the big file alone bounds the pass: their start-up would be added for nothing.
  const files = { 'assets/big.js': textOf(300_000, 1), 'a.css': textOf(6000, 2), 'b.html': textOf(3000, 3) };
  await writeTree(root, files);
  const onWorker = [];
  const running = new Set();
  const hooks = { onJobStart: (task) => onWorker.push(task.rel) };
  const opts = { concurrency: 2, brotliQuality: 5, onProgress: (p) => p.running.forEach((rel) => running.add(rel)) };
  const r = await pass(root, opts, new Set(), hooks);
  expect(r.report.files).toMatchObject({ compressed: 3 });
  expect(onWorker).toEqual([]);
  expect(running).toContain('assets/big.js');
  for (const [rel, text] of Object.entries(files)) {
    expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, `${rel}.br`))).toString()).toBe(text);
    expect(zlib.gunzipSync(await fs.readFile(path.join(root, `${rel}.gz`))).toString()).toBe(text);
  }
  // A second big file: the two run side by side on the workers.
  await writeTree(root, { 'assets/big2.js': textOf(300_000, 4) });
  await fs.rm(path.join(root, 'precompressor-manifest.json'));
  const again = await pass(root, { ...opts, force: true }, new Set(), hooks);
  expect(again.report.files).toMatchObject({ compressed: 4 });
  expect(onWorker).toEqual(expect.arrayContaining(['assets/big.js', 'assets/big2.js']));
  expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, 'assets/big2.js.br'))).toString()).toBe(textOf(300_000, 4));
});

test('a watch batch keeps a big file off its thread; onThisThread() weighs the work against the workers', () => {
  const c = (cost, largest, cores = 2) => onThisThread({ cost, largest, cores, build: true });
  expect(c(200_000, 10_000)).toBe(true); // small
  expect(c(330_000, 300_000)).toBe(true); // one big file: its own encode bounds the pool too
  expect(c(600_000, 300_000)).toBe(false); // two: side by side on the pool
  expect(c(400_000, 40_000, 1)).toBe(true); // one worker gains nothing
  expect(c(1_100_000, 1_000_000)).toBe(false); // too long for this thread
  expect(onThisThread({ cost: 330_000, largest: 300_000, cores: 2, build: false })).toBe(false);
});

test('a manifest path in a folder that does not exist yet: the folder is made, and the manifest is not compressed', async () => {
  await writeTree(root, { 'a.js': textOf(4000, 1) });
  const r = await precompress(root, { manifest: 'meta/x.json', encodings: ['gzip'] });
  expect(r.ok).toBe(true);
  const m = JSON.parse(await fs.readFile(path.join(root, 'meta/x.json'), 'utf8'));
  expect(Object.keys(m.files)).toEqual(['a.js']);
  expect(zlib.gunzipSync(await fs.readFile(path.join(root, 'a.js.gz'))).toString()).toBe(textOf(4000, 1));
});

test('onProgress names the files running: one big file among small ones is announced as it starts, and nothing runs at the end', async () => {
  const tree = { 'assets/big.js': textOf(600_000, 1) };
  for (let i = 0; i < 7; i++) tree[`s${i}.css`] = textOf(3000, i + 2);
  await writeTree(root, tree);
  const events = [];
  const r = await precompress(root, { concurrency: 2, brotliQuality: 4, deltas: false, onProgress: (p) => events.push(p) });
  expect(r.ok).toBe(true);
  // Largest first: the big file's first task is the first job a slot takes, announced at once.
  expect(events.find((e) => e.running.length > 0)).toMatchObject({ running: ['assets/big.js'], filesDone: 0, filesTotal: 8 });
  const names = new Set(Object.keys(tree));
  for (const e of events) for (const rel of e.running) expect(names).toContain(rel);
  expect(events.at(-1)).toMatchObject({ running: [], filesDone: 8, filesTotal: 8 });
});
