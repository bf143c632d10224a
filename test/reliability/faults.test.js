// Faults the compressor meets in real builds, through the real CLI: unreadable files and folders,
// a read-only output folder, a disk that fills up, files deleted or rewritten during the run, a
// folder of 20,000 files, very long and unicode names. Each must give a clear message naming the
// file, a non-zero exit when the run could not do its job, and never a corrupt output.
//
// Root ignores permissions, so the permission cases run the CLI as `nobody` (spawn uid/gid).
// The full disk is a 2 MB tmpfs mounted here (root only; skipped with a message otherwise).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, execFileSync } from 'node:child_process';
import { BIN, MANIFEST, checkConsistent, checkCrashInvariants, decodedHash, listTree, nobody, record, runCli } from './helpers.js';

const user = nobody();
const figures = {};
let root;

beforeEach(async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-faults-'));
});
afterEach(async () => {
  await fsp.chmod(root, 0o755).catch(() => {});
  for (const rel of await listTree(root).catch(() => [])) await fsp.chmod(path.join(root, path.dirname(rel)), 0o755).catch(() => {});
  await fsp.rm(root, { recursive: true, force: true });
});
afterAll(() => {
  record('faults', figures);
});

/** Compressible text of `n` bytes, different for each seed. */
function text(n, seed = 1) {
  const words = ['static', 'asset', 'bundle', 'brotli', 'gzip', 'server', 'function', 'return', 'const', 'export'];
  let s = '';
  let x = seed;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += words[x % words.length] + (x % 7 === 0 ? `${x}\n` : ' ');
  }
  return s.slice(0, n);
}

async function write(rel, content) {
  const abs = path.join(root, ...rel.split('/'));
  await fsp.mkdir(path.dirname(abs), { recursive: true });
  await fsp.writeFile(abs, content);
  return abs;
}

/** Hand the whole tree to `nobody` (the CLI runs as that user). */
function chownTree(dir, u) {
  execFileSync('chown', ['-R', `${u.uid}:${u.gid}`, dir]);
}

const asNobody = user ? test : test.skip;
if (!user) console.warn('[reliability] faults: permission cases SKIPPED (not root, or no "nobody" user)');

asNobody('an unreadable file (EACCES): exit 1, one error line naming it, the others compressed, no variant for it', async () => {
  await write('ok.js', text(20_000));
  const secret = await write('secret.js', text(20_000, 2));
  chownTree(root, /** @type {any} */ (user));
  await fsp.chmod(secret, 0o000);
  const r = await runCli([root, '--json', '--quiet'], /** @type {any} */ (user));
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error: secret\.js: EACCES: permission denied/m);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  const names = await fsp.readdir(root);
  expect(names.filter((n) => n.startsWith('secret.js.'))).toEqual([]);
  expect((await checkCrashInvariants(root)).corrupt).toEqual([]);
  const m = JSON.parse(await fsp.readFile(path.join(root, MANIFEST), 'utf8'));
  expect(Object.keys(m.files)).toEqual(['ok.js']);
  figures.eacces = { exit: r.code, message: r.stderr.trim() };
});

asNobody('an unreadable folder: a failure naming it (exit 1), the rest compressed and listed', async () => {
  await write('ok.js', text(20_000));
  await write('private/a.js', text(20_000, 3));
  chownTree(root, /** @type {any} */ (user));
  await fsp.chmod(path.join(root, 'private'), 0o000);
  const r = await runCli([root], /** @type {any} */ (user));
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/private/);
  expect(r.stderr).toMatch(/EACCES/);
  expect((await fsp.readdir(root)).sort()).toEqual([MANIFEST, 'ok.js', 'ok.js.br', 'ok.js.gz', 'private'].sort());
  const manifest = JSON.parse(await fsp.readFile(path.join(root, MANIFEST), 'utf8'));
  expect(Object.keys(manifest.files)).toEqual(['ok.js']);
  figures.unreadableFolder = { exit: r.code, message: r.stderr.trim() };
});

asNobody('a read-only output folder: exit 1, each file and the manifest named, no output, no temp file', async () => {
  await write('a.js', text(20_000));
  await write('sub/b.css', text(20_000, 4));
  await fsp.chmod(root, 0o755);
  await fsp.chmod(path.join(root, 'sub'), 0o755);
  // Owned by root, readable by all, writable by nobody but root.
  const r = await runCli([root, '--quiet'], /** @type {any} */ (user));
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error: a\.js: EACCES/m);
  expect(r.stderr).toMatch(/^error: sub\/b\.css: EACCES/m);
  expect(r.stderr).toContain(MANIFEST);
  expect(await listTree(root)).toEqual(['a.js', 'sub/b.css']);
  figures.readOnlyFolder = { exit: r.code, lines: r.stderr.trim().split('\n').length };
});

// ---- a disk that fills up: a 2 MB tmpfs ----
let mountPoint = null;
function tryMount() {
  if (process.getuid?.() !== 0) return 'not root';
  mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return null;
  } catch (err) {
    fs.rmdirSync(mountPoint);
    mountPoint = null;
    return String(/** @type {any} */ (err).stderr || err).trim();
  }
}
const mountError = tryMount();
if (mountError) console.warn(`[reliability] faults: full-disk case SKIPPED, cannot mount a tmpfs (${mountError})`);
afterAll(() => {
  if (mountPoint) {
    execFileSync('umount', [mountPoint]);
    fs.rmdirSync(mountPoint);
  }
});

(mountError ? test.skip : test)('a disk that fills up (2 MB tmpfs): exit 1, ENOSPC named per file, no corrupt or temp file; after freeing space the next run is consistent', async () => {
  const dir = /** @type {string} */ (mountPoint);
  // Hex text compresses to about half: 1.5 MB of originals cannot take 2 × 0.75 MB of variants.
  const names = [];
  for (let i = 0; i < 6; i++) {
    const name = `chunk${i}.js`;
    await fsp.writeFile(path.join(dir, name), crypto.randomBytes(128 * 1024).toString('hex'));
    names.push(name);
  }
  const r = await runCli([dir, '--quiet']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error: chunk\d\.js: ENOSPC/m);
  for (const line of r.stderr.trim().split('\n')) expect(line).toMatch(/^error: (chunk\d\.js|.*precompressor-manifest\.json): ENOSPC/);
  const inv = await checkCrashInvariants(dir);
  expect(inv.corrupt).toEqual([]);
  expect(inv.temps).toBe(0);
  expect(inv.manifest).not.toBe('invalid');
  figures.diskFull = { exit: r.code, errorLines: r.stderr.trim().split('\n').length, variantsLeft: inv.variants, manifest: inv.manifest, sample: r.stderr.split('\n')[0] };
  // Free space: remove half the originals; the next run completes and everything is consistent.
  for (const name of names.slice(3)) await fsp.rm(path.join(dir, name));
  const again = await runCli([dir, '--quiet']);
  expect(again.stderr).toBe('');
  expect(again.code).toBe(0);
  expect(await checkConsistent(dir, names.slice(0, 3))).toEqual([]);
  for (const rel of await listTree(dir)) await fsp.rm(path.join(dir, rel));
});

test('files deleted and rewritten while the run is in progress: named, exit 1 for the deleted, never a variant that does not match', async () => {
  const files = [];
  for (let i = 0; i < 120; i++) files.push(await write(`f${String(i).padStart(3, '0')}.js`, text(30_000 + i * 500, i + 1)));
  const child = spawn(process.execPath, [BIN, root], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  let exited = false;
  const closed = new Promise((resolve) => child.on('close', resolve)).then((code) => ((exited = true), code));
  // Largest first: the small files (low numbers) are compressed last. Wait for the first variant
  // (bounded: a run that exits or stalls before writing one fails here instead of hanging).
  const deadline = Date.now() + 30_000;
  while (!(await fsp.readdir(root)).some((n) => n.endsWith('.br') || n.endsWith('.gz'))) {
    if (exited || Date.now() > deadline) {
      child.kill();
      throw new Error(`no variant written (${exited ? 'the run exited' : 'none within 30 s'}): ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const deleted = files.slice(0, 10);
  const rewritten = files.slice(10, 20);
  for (const f of deleted) await fsp.rm(f);
  for (const f of rewritten) await fsp.writeFile(f, text(12_345, 999));
  const code = await closed;
  expect(code).toBe(1);
  for (const f of deleted) expect(stderr).toContain(`error: ${path.basename(f)}: ENOENT`);
  const inv = await checkCrashInvariants(root);
  expect(inv.corrupt).toEqual([]);
  expect(inv.temps).toBe(0);
  for (const f of deleted) expect(fs.existsSync(`${f}.br`) || fs.existsSync(`${f}.gz`)).toBe(false);
  const problems = await checkConsistent(root, files.slice(10).map((f) => path.basename(f)));
  expect(problems).toEqual([]);
  figures.deletedDuringRun = { exit: code, deleted: deleted.length, rewritten: rewritten.length, sample: stderr.split('\n').find((l) => l.includes('ENOENT')) };
});

test('a file rewritten without pause during the run: named as changing (exit 1, no variant), or all its variants from one version', async () => {
  const big = await write('busy.js', text(24 * 1024 * 1024, 5));
  await write('calm.js', text(50_000, 6));
  // A writer in another process rewrites busy.js in place, with a new size each time, until killed.
  const writer = spawn(process.execPath, ['-e', `
    const fs = require('fs'); const base = fs.readFileSync(${JSON.stringify(big)}); let i = 0;
    for (;;) fs.writeFileSync(${JSON.stringify(big)}, base.subarray(0, base.length - (i++ % 1000)));
  `], { stdio: 'ignore' });
  let r;
  try {
    r = await runCli([root, '--quiet']);
  } finally {
    writer.kill('SIGKILL');
    await new Promise((resolve) => writer.on('close', resolve));
  }
  if (r.code === 1) {
    // Every read of it saw it change: it is named, and no variant of it is left.
    expect(r.stderr).toMatch(/^error: busy\.js: .*(changed while it was being read|kept changing)/m);
    expect(fs.existsSync(`${big}.br`) || fs.existsSync(`${big}.gz`)).toBe(false);
  } else {
    // Its encodings all caught the same complete version between two writes: both variants
    // decode to the version the manifest records (hash and size), never to a mix.
    expect(r.code).toBe(0);
    const entry = JSON.parse(await fsp.readFile(path.join(root, MANIFEST), 'utf8')).files['busy.js'];
    const recorded = Buffer.from(entry.hash.slice('sha256-'.length), 'base64url').toString('hex');
    for (const [enc, ext] of [['br', '.br'], ['gzip', '.gz']]) {
      // (A read right after the writer's truncation sees an empty file: no variant then.)
      if (entry.variants[enc]) expect(await decodedHash(big + ext)).toBe(recorded);
      else expect(fs.existsSync(big + ext)).toBe(false);
    }
  }
  figures.keptChanging = { exit: r.code, message: r.stderr.trim() };
  const again = await runCli([root, '--quiet']);
  expect(again.code).toBe(0);
  expect(await checkConsistent(root, ['busy.js', 'calm.js'])).toEqual([]);
});

test('a folder of 20,000 files: completes, consistent; the second run changes nothing', async () => {
  const originals = [];
  for (let i = 0; i < 20_000; i++) {
    const rel = `d${i % 100}/file-${i}.js`;
    if (i < 100) await fsp.mkdir(path.join(root, `d${i}`));
    fs.writeFileSync(path.join(root, rel), text(600 + (i % 50) * 20, i + 1));
    originals.push(rel);
  }
  let t = Date.now();
  const first = await runCli([root, '--json', '--quiet']);
  const firstMs = Date.now() - t;
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  const report = JSON.parse(first.stdout);
  expect(report.files.compressed).toBe(20_000);
  expect(await checkConsistent(root, originals)).toEqual([]);
  t = Date.now();
  const second = await runCli([root, '--json', '--quiet']);
  const secondMs = Date.now() - t;
  expect(second.code).toBe(0);
  expect(JSON.parse(second.stdout).files.unchanged).toBe(20_000);
  figures.files20k = { firstRunMs: firstMs, secondRunMs: secondMs };
});

test('very long and unicode names: compressed and listed under their exact names, or one clear error each', async () => {
  const names = [
    'café.js', 'cafe\u0301.js', '日本語/ファイル.js', 'emoji-😀.css', 'space name.js', 'per%20cent.js', 'hash#q?.js',
    'quote\'"`.js', 'a'.repeat(200) + '.js', 'b'.repeat(224) + '.js', 'c'.repeat(240) + '.js', 'd'.repeat(249) + '.js', 'e'.repeat(252) + '.js',
    'é'.repeat(110) + '.js',
  ];
  // A deep path: 14 folders of 200 bytes (about 2,900 bytes in all).
  names.push([...Array.from({ length: 14 }, (_, i) => `${i}`.padEnd(200, 'x')), 'deep.js'].join('/'));
  for (const [i, rel] of names.entries()) await write(rel, text(10_000, i + 10));
  const r = await runCli([root, '--json', '--quiet']);
  const report = JSON.parse(r.stdout);
  const m = JSON.parse(await fsp.readFile(path.join(root, MANIFEST), 'utf8'));
  const failed = new Set(report.failures.map((f) => f.path));
  for (const rel of names) {
    // A name whose variant cannot exist (over NAME_MAX with ".br") must fail with its name; others must be compressed.
    if (Buffer.byteLength(path.basename(rel)) + 3 > 255) {
      expect(failed.has(rel)).toBe(true);
      expect(r.stderr).toContain(`error: ${rel}: ENAMETOOLONG`);
    }
    else expect(Object.keys(m.files[rel]?.variants ?? {})).toEqual(['br', 'gzip']);
  }
  expect(r.code).toBe(failed.size > 0 ? 1 : 0);
  expect((await checkCrashInvariants(root)).corrupt).toEqual([]);
  expect(await checkConsistent(root, names.filter((n) => !failed.has(n)))).toEqual([]);
  figures.names = { files: names.length, failed: [...failed], exit: r.code, messages: r.stderr.trim() };
});
