// Shared pieces of the reliability suite: running the real CLI, checking a compressed tree by
// streaming (never loading big files), serveStatic in a child process that reports its RSS and
// open descriptors, and recording the figures each suite measured (the README quotes them).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../helpers/spawn.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(REPO, 'bin', 'precompressor.js');
export const MANIFEST = 'precompressor-manifest.json';
export const RESULTS = path.join(os.tmpdir(), 'precompressor-reliability-results.jsonl');

const DECODERS = { '.br': () => zlib.createBrotliDecompress(), '.gz': () => zlib.createGunzip() };
const SUFFIX = { br: '.br', gzip: '.gz' };

/** Append one suite's figures to RESULTS (one JSON line) and print them. */
export function record(name, figures) {
  const line = JSON.stringify({ name, at: new Date().toISOString(), node: process.version, cpus: os.availableParallelism(), ...figures });
  fs.appendFileSync(RESULTS, line + '\n');
  console.log(`[reliability] ${line}`);
}

/**
 * Run the CLI to completion. `uid`/`gid` run it as another user (root cannot be denied access);
 * such a run does not use the variant cache, whose folders the tests' other runs (as root) own: its
 * warning that the cache cannot be written would be a line the permission tests do not expect.
 * @returns {Promise<{ code: number | null, signal: string | null, stdout: string, stderr: string }>}
 */
export function runCli(args, opts = {}) {
  const flags = opts.uid === undefined ? [] : ['--no-cache'];
  return runCommand(process.execPath, [BIN, ...args, ...flags], { uid: opts.uid, gid: opts.gid, env: process.env });
}

/** The uid/gid of `nobody`, or null when there is no such user or we are not root. */
export function nobody() {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'nobody']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'nobody']).toString().trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/** sha256 (hex) of a file, streamed. */
export async function hashFileStreamed(file) {
  const h = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), h);
  return h.digest('hex');
}

/** sha256 (hex) of a compressed file's decoded bytes, streamed; null when it does not decode. */
export async function decodedHash(file) {
  const h = crypto.createHash('sha256');
  const dec = DECODERS[path.extname(file)]();
  try {
    await pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), dec, h);
    return h.digest('hex');
  } catch {
    return null;
  }
}

/** Every file under `root` (POSIX relative paths), recursively. */
export async function listTree(root) {
  const out = [];
  for (const e of await fsp.readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.push(path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  }
  return out.sort();
}

/**
 * The crash invariants: every `.br`/`.gz` under its final name decodes to its current original,
 * and the manifest is absent or valid (parses, schema 1, 2 or 3, files an object).
 * @returns {Promise<{ variants: number, corrupt: string[], manifest: 'absent' | 'valid' | 'invalid', temps: number }>}
 */
export async function checkCrashInvariants(root) {
  const files = await listTree(root);
  const names = new Set(files);
  const corrupt = [];
  let variants = 0;
  for (const rel of files) {
    const ext = path.extname(rel);
    if (!(ext in DECODERS) || !names.has(rel.slice(0, -ext.length))) continue;
    variants++;
    const [a, b] = await Promise.all([decodedHash(path.join(root, rel)), hashFileStreamed(path.join(root, rel.slice(0, -ext.length)))]);
    if (a !== b) corrupt.push(rel);
  }
  let manifest = 'absent';
  if (names.has(MANIFEST)) {
    try {
      const m = JSON.parse(await fsp.readFile(path.join(root, MANIFEST), 'utf8'));
      manifest = [1, 2, 3].includes(m.schema) && m.files && typeof m.files === 'object' ? 'valid' : 'invalid';
    } catch {
      manifest = 'invalid';
    }
  }
  return { variants, corrupt, manifest, temps: files.filter((f) => f.endsWith('.pctmp')).length };
}

/**
 * After a completed run: the manifest lists every original, each listed variant exists with the
 * recorded size and decodes to the original whose sha256 the manifest records; no temp file left.
 * @returns {Promise<string[]>} problems (empty when consistent)
 */
export async function checkConsistent(root, originals) {
  const problems = [];
  const m = JSON.parse(await fsp.readFile(path.join(root, MANIFEST), 'utf8'));
  for (const rel of originals) if (!m.files[rel]) problems.push(`${rel}: not in the manifest`);
  for (const [rel, e] of Object.entries(m.files)) {
    const orig = path.join(root, ...rel.split('/'));
    const hex = await hashFileStreamed(orig).catch(() => null);
    if (hex === null || `sha256-${Buffer.from(hex, 'hex').toString('base64url')}` !== e.hash) problems.push(`${rel}: hash differs from the manifest`);
    for (const [enc, v] of Object.entries(e.variants)) {
      const file = orig + SUFFIX[enc];
      const st = await fsp.stat(file).catch(() => null);
      if (st === null || st.size !== v.size) problems.push(`${rel}${SUFFIX[enc]}: missing or size differs`);
      else if ((await decodedHash(file)) !== hex) problems.push(`${rel}${SUFFIX[enc]}: does not decode to the original`);
    }
  }
  if ((await listTree(root)).some((f) => f.endsWith('.pctmp'))) problems.push('temp files left');
  return problems;
}

/**
 * A real corpus: JavaScript, CSS, JSON, Markdown and maps copied from installed packages in
 * node_modules (sorted, deterministic), until `bytes` are reached. Files over 600 kB are skipped.
 * @returns {Promise<{ files: string[], bytes: number }>}
 */
export async function buildRealCorpus(dir, bytes) {
  const sources = ['vite/dist', '@babel/parser/lib', 'eslint/lib', 'yargs', 'typescript', 'express', 'jest-circus', 'fast-glob'];
  const files = [];
  let total = 0;
  for (const src of sources) {
    const base = path.join(REPO, 'node_modules', src);
    if (!fs.existsSync(base)) continue;
    for (const rel of await listTree(base)) {
      if (total >= bytes) break;
      if (!/\.(m?js|cjs|css|json|md|map|d\.ts)$/.test(rel)) continue;
      const from = path.join(base, rel);
      const st = await fsp.stat(from);
      if (st.size < 200 || st.size > 6e5) continue;
      const to = path.join(dir, src.replaceAll('/', '_'), rel);
      await fsp.mkdir(path.dirname(to), { recursive: true });
      await fsp.copyFile(from, to);
      files.push(path.relative(dir, to).split(path.sep).join('/'));
      total += st.size;
    }
  }
  return { files, bytes: total };
}

/** Free bytes on the file system holding `dir`. */
export function freeBytes(dir) {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

export const MB = 1024 * 1024;

/**
 * serveStatic on node:http in a child process (test/reliability/server-child.js).
 * @returns {Promise<{ port: number, child: import('node:child_process').ChildProcess, exited: () => boolean,
 *   stats: () => Promise<{ rss: number, heapUsed: number, fds: number, errors: number }>, settled: () => Promise<void>, close: () => Promise<void> }>}
 */
export async function startServer(root, options = {}) {
  const { fork } = await import('node:child_process');
  const child = fork(path.join(REPO, 'test', 'reliability', 'server-child.js'), [root, JSON.stringify(options)], {
    execArgv: ['--expose-gc'], env: process.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let exitCode = null;
  child.on('exit', (code, signal) => (exitCode = code ?? signal));
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(/** @type {any} */ (m).port));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  // a server that died does not answer: fail at once rather than wait for the test's time limit
  const ask = (msg, match) => new Promise((resolve, reject) => {
    if (exitCode !== null) return reject(new Error(`server exited (${exitCode}) before ${msg}`));
    const gone = (code, signal) => {
      child.off('message', on);
      reject(new Error(`server exited (${code ?? signal}) before answering ${msg}`));
    };
    const on = (m) => {
      if (match(m)) {
        child.off('message', on);
        child.off('exit', gone);
        resolve(m);
      }
    };
    child.on('message', on);
    child.once('exit', gone);
    child.send(msg);
  });
  return {
    port, child,
    exited: () => exitCode !== null,
    stats: () => /** @type {any} */ (ask('stats', (m) => typeof m === 'object' && m !== null && 'rss' in m)),
    settled: async () => void (await ask('settled', (m) => m === 'settled')),
    close: async () => {
      if (exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.send('close');
      await gone;
    },
  };
}

/** Poll `read()` until `ok(value)` or `ms` elapse; returns the last value read. */
export async function pollUntil(read, ok, ms = 10_000) {
  const end = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    v = await read();
  }
  return v;
}
