// Files rewritten (atomically and in place), grown, shrunk, deleted and recreated by another
// process while serveStatic (in a child process, watch on) serves them to 8 keep-alive clients
// asking for br, gzip and identity. Every response that completes must have a body as long as its
// Content-Length, and its decoded body must be the file as it was at one moment, never a mix of
// two versions. A response the server cuts short (the file shrank under it) must end in a
// connection error, never in a short body taken as complete.

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { record, startServer } from './helpers.js';
import { versionOf, growChunk, shrinkOriginal, initialFiles } from './stale-writer.js';

const SECONDS = Number(process.env.PC_STALE_SECONDS ?? 30);
const CLIENTS = 8;
const WRITER = fileURLToPath(new URL('./stale-writer.js', import.meta.url));

let dir;
let server;
afterAll(async () => {
  await server?.close();
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

/** Is `body` a prefix of `whole`? */
const prefixOf = (body, whole) => body.length <= whole.length && whole.subarray(0, body.length).equals(body);

let growCache = Buffer.alloc(0);
let growChunks = 0;
function growPrefix(len) {
  const parts = [growCache];
  let total = growCache.length;
  while (total < len) {
    const c = growChunk(growChunks++);
    parts.push(c);
    total += c.length;
  }
  growCache = Buffer.concat(parts);
  return growCache;
}
const SHRINK = shrinkOriginal();

/** Why `body` (decoded) is not the file `name` as it was at one moment, or null when it is. */
function verdict(name, body) {
  if (name === 'grow.js') return prefixOf(body, growPrefix(body.length)) ? null : 'not a prefix of the grown file';
  if (name === 'shrink.js') return prefixOf(body, SHRINK) ? null : 'not a prefix of the original';
  const m = /^[a-z]+\.js#(\d+);/.exec(body.subarray(0, 40).toString('latin1'));
  if (body.length === 0) return name === 'inplace.js' ? null : 'empty';
  if (!m) return 'no version token at the start';
  const whole = versionOf(name, Number(m[1]));
  if (name === 'inplace.js') return prefixOf(body, whole) ? null : `mixes version ${m[1]} with another`;
  return body.equals(whole) ? null : `is not exactly version ${m[1]}`;
}

function get(agent, port, name, ae) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/${name}`, agent, headers: { 'accept-encoding': ae } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
      res.on('error', () => resolve({ aborted: true }));
      res.on('aborted', () => {});
    });
    req.on('error', () => resolve({ aborted: true }));
  });
}

test(`${SECONDS} s of rewrites, growth, shrinking and deletion under load: every body complete and from one moment`, async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-stale-'));
  for (const [name, data] of Object.entries(initialFiles())) await fsp.writeFile(path.join(dir, name), data);
  const report = await precompress(dir, { brotliQuality: 5 });
  expect(report.ok).toBe(true);
  server = await startServer(dir);

  const writer = spawn(process.execPath, [WRITER, dir, String(SECONDS)], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
  let writerOut = '';
  writer.stdout.on('data', (d) => (writerOut += d));
  const writerDone = new Promise((resolve) => writer.on('close', resolve));
  let writing = true;
  writerDone.then(() => (writing = false));

  const names = Object.keys(initialFiles());
  const counts = { responses: 0, complete: 0, abortedByServer: 0, notFound: 0, byEncoding: { br: 0, gzip: 0, identity: 0 } };
  const problems = [];
  let x = 3;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    while (writing) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      const name = names[(x >>> 12) % names.length];
      const ae = ['br', 'gzip', 'identity', 'br, gzip'][(x >>> 20) % 4];
      const r = await get(agent, server.port, name, ae);
      counts.responses++;
      if (r.aborted || !r.complete) {
        counts.abortedByServer++;
        continue;
      }
      if (r.status === 404 && name === 'gone.js') {
        counts.notFound++;
        continue;
      }
      if (r.status !== 200) {
        problems.push(`${name}: status ${r.status}`);
        continue;
      }
      counts.complete++;
      const enc = r.headers['content-encoding'] ?? 'identity';
      counts.byEncoding[enc]++;
      if (Number(r.headers['content-length']) !== r.body.length) problems.push(`${name} (${enc}): ${r.body.length} bytes, Content-Length ${r.headers['content-length']}`);
      const body = enc === 'br' ? zlib.brotliDecompressSync(r.body) : enc === 'gzip' ? zlib.gunzipSync(r.body) : r.body;
      const why = verdict(name, body);
      if (why) problems.push(`${name} (${enc}, ${body.length} bytes): ${why}`);
    }
    agent.destroy();
  }));
  await writerDone;
  const stats = await server.stats();
  record('staleness', { seconds: SECONDS, clients: CLIENTS, ...counts, problems: problems.length, serverErrors: stats.errors, writer: writerOut.trim(), sampleProblems: problems.slice(0, 10) });
  expect(problems.slice(0, 20)).toEqual([]);
  expect(stats.errors).toBe(0);
  expect(counts.complete).toBeGreaterThan(1000);
});
