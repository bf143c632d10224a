// Connections that hold on to the server (#27 items 1, 8 and 11), against the real
// `precompressor serve` in its own process (descriptors and RSS read from /proc/<pid>):
// - pipelining: 3 connections each write 300 `GET /big.bin` (24 MiB, streamed) in one packet and
//   never read; the peak of open descriptors and RSS over 2.5 s (as the report measured it), for
//   `precompressor serve` and for serveStatic on a plain node:http server.
// - idle flood: one client holds 500 idle sockets (the default cap; one header byte each) and
//   re-opens each as it closes, while 10 other clients each ask for a file: every one is answered.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { precompress } from '../../lib/compress/precompress.js';
import { BIN, MB, record, startServer } from './helpers.js';
import { request } from '../helpers/serve-site.js';

const linux = process.platform === 'linux' ? test : test.skip;
const SAMPLE_MS = 2500;

let dir;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-conns-'));
  await fsp.writeFile(path.join(dir, 'big.bin'), Buffer.alloc(24 * MB, 'x'));
  await fsp.writeFile(path.join(dir, 'small.txt'), 'small\n');
  expect((await precompress(dir, { cache: false, encodings: ['gzip'], gzipLevel: 1 })).ok).toBe(true);
});
afterAll(async () => {
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

/** `precompressor serve <dir> --port 0 ...args` in its own process, once it prints its URL. */
async function startCli(args = []) {
  const child = spawn(process.execPath, [BIN, 'serve', dir, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`precompressor serve exited with ${code}`)));
  });
  const gone = new Promise((r) => child.once('exit', r));
  return {
    port,
    stats: () => ({
      fds: fs.readdirSync(`/proc/${child.pid}/fd`).length,
      rss: Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) * 1024,
    }),
    close: async () => {
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** The peak of `stats()` over `ms`, sampled every 100 ms. */
async function peakOver(stats, ms) {
  let peak = await stats();
  for (const end = Date.now() + ms; Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 100));
    const s = await stats();
    peak = { fds: Math.max(peak.fds, s.fds), rss: Math.max(peak.rss, s.rss) };
  }
  return peak;
}

/** 3 connections, each 300 pipelined GETs of big.bin in one packet, never read: peak growth. */
async function pipelineFlood(port, stats) {
  const base = await stats();
  const one = 'GET /big.bin HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n';
  const socks = Array.from({ length: 3 }, () => {
    const s = net.connect(port, '127.0.0.1');
    s.pause();
    s.on('error', () => {});
    s.write(one.repeat(300));
    return s;
  });
  const peak = await peakOver(stats, SAMPLE_MS);
  for (const s of socks) s.destroy();
  return { fds: peak.fds - base.fds, rssMB: Math.round((peak.rss - base.rss) / MB) };
}

linux('pipelining: 3 connections × 300 pipelined GETs of a 24 MiB file hold a few descriptors and MB', async () => {
  const cli = await startCli();
  let serve;
  try {
    serve = await pipelineFlood(cli.port, cli.stats);
  } finally {
    await cli.close();
  }
  const own = await startServer(dir);
  let plain;
  try {
    plain = await pipelineFlood(own.port, own.stats);
  } finally {
    await own.close();
  }
  record('connections: pipelining', { connections: 3, requestsEach: 300, fileMB: 24, sampledMs: SAMPLE_MS, serve, serveStaticOnNodeHttp: plain });
  // at most a socket and a file per connection
  expect(serve.fds).toBeLessThanOrEqual(6);
  expect(plain.fds).toBeLessThanOrEqual(6);
  // the report measured +917 MB (serve) and +150 MB (express.static): a response's buffers per connection now
  expect(serve.rssMB).toBeLessThan(32);
  expect(plain.rssMB).toBeLessThan(48);
});

linux('idle flood: 500 idle sockets re-opened as they close do not lock 10 other clients out', async () => {
  const cli = await startCli();
  const attackers = new Set();
  let stop = false;
  let connected = 0;
  let closedByServer = 0;
  let holding;
  const held = new Promise((r) => (holding = r));
  const open = () => {
    const s = net.connect(cli.port, '127.0.0.1');
    attackers.add(s);
    s.on('error', () => {});
    s.on('connect', () => {
      s.write('G');
      if (++connected === 500) holding();
    });
    s.on('close', () => {
      attackers.delete(s);
      if (stop) return;
      closedByServer++;
      open();
    });
  };
  try {
    for (let i = 0; i < 500; i++) open();
    await held;
    const started = Date.now();
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => request(cli.port, '/small.txt').then(
      (r) => r.status, (err) => err.code)));
    const seconds = (Date.now() - started) / 1000;
    record('connections: idle flood', { idleSockets: 500, clients: 10, outcomes, seconds, idleClosedByServer: closedByServer });
    expect(outcomes).toEqual(Array(10).fill(200));
  } finally {
    stop = true;
    for (const s of attackers) s.destroy();
    await cli.close();
  }
});
