import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

// a Node without a dictionary encoder (22.12: no zstd) says why the site has no dictionary
const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));

/** Run the CLI to completion; resolves { code, stdout, stderr }. */
const run = (args) => runCommand(process.execPath, [BIN, ...args]);

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

test('prints a summary and exits 0; --json prints the report', async () => {
  await writeTree(root, { 'a.js': textOf(20_000), 'b.png': 'png', 'sub/c.css': textOf(3000, 2) });
  const r = await run([root]);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^precompressor: 3 files in /);
  expect(r.stdout).toMatch(/compressed 2, unchanged 0; skipped: 1 compressed format, 0 not smaller, 0 excluded, 0 empty/);
  expect(r.stdout).toMatch(/→ br .* · gzip /);

  await fs.writeFile(path.join(root, 'a.js'), textOf(21_000));
  const j = await run([root, '--json', '--no-deltas']); // (a.js changed: no deploy delta in this exact report)
  expect(j.code).toBe(0);
  const report = JSON.parse(j.stdout);
  expect(report).toEqual({
    ok: true,
    root,
    manifest: path.join(root, 'precompressor-manifest.json'),
    dryRun: false,
    encodings: ['br', 'gzip'],
    durationMs: expect.any(Number),
    files: { scanned: 3, compressed: 1, fromCache: 0, unchanged: 1, notSmaller: 0, excluded: 0, compressedFormat: 1, empty: 0, failed: 0 },
    bytes: { original: expect.any(Number), compressible: expect.any(Number), br: expect.any(Number), gzip: expect.any(Number) },
    failures: [],
    warnings: [],
    changes: [{ path: 'a.js', action: 'compress' }],
    deltas: { encoders: [], files: 0, written: 0, reused: 0, removed: 0, bytes: 0, savedBytes: 0, unhashed: 0, byContent: 0, unavailable: null },
    siteDictionary: { path: null, method: 'none', size: 0, bytes: 0, pages: 0, written: 0, reused: 0, pageBytes: 0, ordinaryBytes: 0, unavailable: null },
    cache: { enabled: true, dir: path.join(/** @type {string} */ (process.env.CACHE_DIR), 'precompressor', 'variants'), hits: 0, misses: 2, rejected: 0, cpuSavedMs: 0 },
  });
});

test('--quiet prints nothing on success; flags reach the API', async () => {
  await writeTree(root, { 'a.js': textOf(20_000), 'a.map': textOf(20_000) });
  const r = await run([root, '--quiet', '--exclude', '**/*.map', '--encodings', 'gzip', '--concurrency', '1']);
  expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  const m = JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));
  expect(m.files['a.js'].variants).toEqual({ gzip: { size: expect.any(Number) } });
  expect(m.files['a.map'].skipped).toBe('excluded');
});

test.each([
  [['/definitely/not/here'], /^precompressor: Directory \/definitely\/not\/here does not exist\n$/],
  [['--concurrency', 'abc', '.'], /^precompressor: Expected --concurrency to be a number\n$/],
  [['--concurrency', '0', '.'], /^precompressor: Expected --concurrency to be a positive integer, got 0 \(number\)\n$/],
  [['--min-ratio', '2', '.'], /^precompressor: Expected --min-ratio to be a number greater than 0 and at most 1, got 2 \(number\)\n$/],
  [['--encodings', 'lzw', '.'], /^precompressor: Expected --encodings to be a list of br, .*got \["lzw"\] \(array\)\n$/],
  [['.', '--bogus'], /^precompressor: Unknown argument: --bogus \(see --help\)\n$/],
  [[], /^precompressor: Not enough non-option arguments/],
])('bad input %j exits 2 with one clear line', async (args, message) => {
  const r = await run(args);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stdout).toBe('');
});

test('without a terminal, a long run prints a plain progress line on stderr every 2 s', async () => {
  // 100 files of 200 kB to Brotli 11 on one worker: several seconds of work even on a fast machine.
  // The run is stopped once two lines are in, so the test takes about 4 s wherever it runs.
  const text = textOf(200_000);
  await writeTree(root, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${String(i).padStart(3, '0')}.js`, text])));
  // (--no-cache: the 100 files are the same, and the cache would make 99 of them instant.)
  const child = spawn(process.execPath, [BIN, root, '--concurrency', '1', '--no-cache'], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  const closed = new Promise((resolve) => child.on('close', resolve));
  await new Promise((resolve) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.split('\n').length > 2) resolve(undefined);
    });
    closed.then(resolve);
  });
  child.kill('SIGKILL');
  await closed;
  const lines = stderr.split('\n').slice(0, 2);
  expect(lines).toEqual([expect.any(String), expect.any(String)]);
  // Plain lines: no bar, no carriage return, no escape code; the totals, the files done so far.
  for (const c of ['\r', '\x1b', '█', '░']) expect(stderr).not.toContain(c);
  const done = lines.map((l) => {
    // the ETA, then the file running for long (announced at once, so on a busy machine even in the first line)
    const m = /^\d+\.\d% (\d+)\/100 files [\d.]+ (?:B|kB|MB)\/20\.0 MB(?: ETA [^·]+)?(?: · \S+(?: \+\d+)?)?$/.exec(l);
    expect([l, m !== null]).toEqual([l, true]);
    return Number(m?.[1]);
  });
  expect(done[0]).toBeLessThanOrEqual(done[1]);
  expect(done[1]).toBeLessThan(100);
  expect(stdout).toBe(''); // still running: no summary yet
});

test('a failing file: one error line naming it, exit 1, others done', async () => {
  await writeTree(root, { 'ok.js': textOf(5000), 'bad.js': textOf(5000, 3) });
  await fs.mkdir(path.join(root, 'bad.js.gz', 'x'), { recursive: true });
  const r = await run([root, '--quiet']);
  expect(r.code).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: bad\.js: .*bad\.js\.gz/)]);
  await fs.access(path.join(root, 'ok.js.br'));
});

test('--help lists every flag with its default and examples', async () => {
  const r = await run(['--help']);
  expect(r.code).toBe(0);
  for (const flag of ['--include', '--exclude', '--skip-extensions', '--encodings', '--brotli-quality', '--gzip-level', '--min-ratio', '--concurrency', '--manifest', '--dotfiles', '--force', '--dry-run', '--quiet', '--json', '--watch']) {
    expect(r.stdout).toContain(flag);
  }
  expect(r.stdout).toContain('[default: 11]');
  expect(r.stdout).toContain('Examples:');
});

test('killed with SIGKILL mid-run: no corrupt variant under its final name, manifest absent or valid, next run consistent', async () => {
  const tree = {};
  for (let i = 0; i < 30; i++) tree[`f${i}.js`] = textOf(40_000 + i * 1000, i + 1);
  await writeTree(root, tree);
  const child = spawn(process.execPath, [BIN, root, '--quiet'], { env: process.env, stdio: 'ignore' });
  // Kill once the first variant has appeared: the run is then surely in the middle.
  const closed = new Promise((resolve) => child.on('close', resolve));
  let killed = false;
  for (;;) {
    const names = await fs.readdir(root);
    if (names.some((n) => n.endsWith('.br') || n.endsWith('.gz'))) {
      killed = child.kill('SIGKILL');
      break;
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await closed;
  expect(killed).toBe(true);
  const names = await fs.readdir(root);
  for (const n of names.filter((x) => x.endsWith('.br') || x.endsWith('.gz'))) {
    const data = await fs.readFile(path.join(root, n));
    const original = await fs.readFile(path.join(root, n.slice(0, -3)));
    const decoded = n.endsWith('.br') ? zlib.brotliDecompressSync(data) : zlib.gunzipSync(data);
    expect(Buffer.compare(decoded, original)).toBe(0);
  }
  if (names.includes('precompressor-manifest.json')) JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));
  const again = await run([root, '--json']);
  expect(again.code).toBe(0);
  const m = JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));
  expect(Object.keys(m.files)).toHaveLength(30);
  expect((await fs.readdir(root)).filter((n) => n.endsWith('.pctmp'))).toEqual([]);
  for (const [rel, e] of Object.entries(m.files)) {
    expect(Object.keys(e.variants)).toEqual(['br', 'gzip']);
    const br = await fs.readFile(path.join(root, `${rel}.br`));
    expect(br.length).toBe(e.variants.br.size);
  }
});

test('a file given as the folder exits 2; --json on a failure reports it with exit 1; an outside symlink warns', async () => {
  await writeTree(root, { 'f.txt': 'x', 'site/ok.js': textOf(5000), 'site/bad.js': textOf(5000, 3) });
  const notDir = await run([path.join(root, 'f.txt')]);
  expect(notDir.code).toBe(2);
  expect(notDir.stderr).toBe(`precompressor: ${path.join(root, 'f.txt')} is not a directory\n`);

  await fs.mkdir(path.join(root, 'site/bad.js.br/x'), { recursive: true });
  await fs.symlink(path.join(root, 'f.txt'), path.join(root, 'site/leak.txt'));
  const r = await run([path.join(root, 'site'), '--json']);
  expect(r.code).toBe(1);
  const report = JSON.parse(r.stdout);
  expect(report.ok).toBe(false);
  expect(report.failures).toEqual([{ path: 'bad.js', code: expect.any(String), message: expect.stringContaining('bad.js.br') }]);
  expect(r.stderr.split('\n')).toEqual(expect.arrayContaining([
    expect.stringMatching(/^warning: leak\.txt: symlink resolves outside the folder/),
    expect.stringMatching(/^error: bad\.js: /),
  ]));
});

test('on a terminal, the progress line names the big file while it runs', async () => {
  const { main } = await import('../../lib/cli/cli.js');
  const tree = { 'assets/big.js': textOf(600_000, 1) };
  for (let i = 0; i < 7; i++) tree[`s${i}.css`] = textOf(3000, i + 2);
  await writeTree(root, tree);
  let err = '';
  let out = '';
  const stderr = /** @type {any} */ ({ isTTY: true, write: (s) => ((err += s), true) });
  const stdout = /** @type {any} */ ({ write: (s) => ((out += s), true) });
  const code = await main([root, '--brotli-quality', '4', '--no-deltas', '--concurrency', '2'], { stdout, stderr });
  expect(code).toBe(0);
  // The job's start is announced at once (not left to the 100 ms rhythm), so this line is always drawn.
  expect(err).toMatch(/\r.\[2K[█░]{24} [\d.]+% 0\/8 files 0 B\/[\d.]+ kB · assets\/big\.js/);
  expect(out).toMatch(/^precompressor: 8 files in /);
});
