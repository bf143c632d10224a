// Which parallelism model is faster here for Brotli 11 + gzip 9: async zlib on libuv's pool
// (what lib/ uses) or worker_threads running sync zlib? Same buffers, same parameters, one run.
// Usage: node test/bench/pool.js [--files 2000] [--small 2000] [--big 4]
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import pLimit from 'p-limit';
import { encodeBuffer, encodeBufferSync, zlibOptions } from '../../lib/compress/encoders/encode.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const cores = os.availableParallelism();

function text(n, seed) {
  const words = ['const', 'function', 'return', 'export', 'import', 'value', 'data', 'render', 'props', 'state'];
  let s = '';
  let x = seed;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += words[x % words.length] + (x % 5 === 0 ? `(${x % 1000});\n` : ' ');
  }
  return Buffer.from(s.slice(0, n));
}

const jobs = [];
for (let i = 0; i < arg('small', 2000); i++) jobs.push(text(800 + (i % 40) * 50, i + 1));
for (let i = 0; i < arg('big', 4); i++) jobs.push(text(1_500_000, 900 + i));
jobs.sort((a, b) => b.length - a.length);
const params = (buf) => ({ size: buf.length, mode: 'text', brotliQuality: 11, gzipLevel: 9 });

async function viaLibuv() {
  const limit = pLimit(cores);
  const t = performance.now();
  await Promise.all(jobs.flatMap((b) => ['br', 'gzip'].map((e) => limit(() => encodeBuffer(b, e, zlibOptions(e, params(b)))))));
  return performance.now() - t;
}

async function viaWorkers() {
  const src = `
    const { parentPort } = require('node:worker_threads');
    const zlib = require('node:zlib');
    parentPort.on('message', ({ id, buf, enc, opts }) => {
      const out = enc === 'br' ? zlib.brotliCompressSync(buf, opts) : zlib.gzipSync(buf, opts);
      parentPort.postMessage({ id, size: out.length });
    });`;
  const t0 = performance.now();
  const workers = Array.from({ length: cores }, () => new Worker(src, { eval: true }));
  const queue = jobs.flatMap((b) => ['br', 'gzip'].map((e) => ({ buf: b, enc: e, opts: zlibOptions(e, params(b)) })));
  let next = 0;
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve) => {
          const feed = () => {
            if (next >= queue.length) return resolve();
            const j = queue[next++];
            w.postMessage({ id: next, buf: j.buf, enc: j.enc, opts: j.opts });
          };
          w.on('message', feed);
          feed();
        }),
    ),
  );
  const ms = performance.now() - t0;
  await Promise.all(workers.map((w) => w.terminate()));
  return ms;
}

function singleThread() {
  const t = performance.now();
  for (const b of jobs) for (const e of ['br', 'gzip']) encodeBufferSync(b, e, zlibOptions(e, params(b)));
  return performance.now() - t;
}

const bytes = jobs.reduce((n, b) => n + b.length, 0);
console.log(`${jobs.length} buffers, ${(bytes / 1e6).toFixed(1)} MB, ${cores} cores, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`);
const single = singleThread();
const rows = [['single thread (CPU work)', single]];
for (let round = 0; round < 2; round++) {
  rows.push(['async zlib on libuv pool', await viaLibuv()]);
  rows.push(['worker_threads + sync zlib', await viaWorkers()]);
}
console.log('| model | wall ms | × (CPU work / cores) |\n|---|---|---|');
for (const [name, ms] of rows) console.log(`| ${name} | ${ms.toFixed(0)} | ${(ms / (single / cores)).toFixed(3)} |`);
