// Load on serveStatic in a child process, over a mixed dist (real JS/CSS/JSON/maps from
// node_modules, incompressible images, HTML), compressed by the real compressor:
// - 60 s of wrk at 64 keep-alive connections, mixed Accept-Encoding and conditional requests:
//   no socket error, no non-2xx/3xx, RSS sampled every 5 s, descriptors back to baseline after;
// - 1,000 downloads aborted mid-body: descriptors back to baseline, the server still answers.
// wrk is required for the first part (apt-get install wrk); without it that part is skipped.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { MB, buildRealCorpus, pollUntil, record, startServer } from './helpers.js';

const DURATION = Number(process.env.PC_LOAD_SECONDS ?? 60);
const CONNECTIONS = 64;
const ABORTS = 1000;
const WRK = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((p) => fs.existsSync(p));
if (!WRK) console.warn('[reliability] load: the 60 s wrk run is SKIPPED, wrk is not installed (apt-get install -y wrk)');

let dir;
let server;
let paths;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-load-'));
  const corpus = await buildRealCorpus(dir, 3 * MB);
  await fsp.mkdir(path.join(dir, 'img'));
  for (let i = 0; i < 20; i++) await fsp.writeFile(path.join(dir, 'img', `photo${i}.png`), crypto.randomBytes(20_000 + i * 5_000));
  await fsp.writeFile(path.join(dir, 'img', 'big.png'), crypto.randomBytes(4 * MB));
  await fsp.writeFile(path.join(dir, 'index.html'), '<!doctype html><title>load</title>' + '<p>hello</p>\n'.repeat(2000));
  // Two 1.5 MB bundles (real files concatenated) whose variants are large enough to abort mid-body.
  for (const [name, list] of [['bundle-a.js', corpus.files], ['bundle-b.js', [...corpus.files].reverse()]]) {
    const parts = [];
    let size = 0;
    for (const f of list) {
      if (size >= 1.5 * MB) break;
      const b = await fsp.readFile(path.join(dir, f));
      parts.push(b);
      size += b.length;
    }
    await fsp.writeFile(path.join(dir, name), Buffer.concat(parts));
  }
  const report = await precompress(dir, {});
  expect(report.ok).toBe(true);
  paths = ['/', '/bundle-a.js', '/bundle-b.js', ...corpus.files.map((f) => '/' + f.split('/').map(encodeURIComponent).join('/')), ...Array.from({ length: 20 }, (_, i) => `/img/photo${i}.png`)];
  server = await startServer(dir);
}, 10 * 60 * 1000);
afterAll(async () => {
  await server?.close();
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

function get(port, p, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, length: Buffer.concat(chunks).length }));
    }).on('error', reject);
  });
}

const lua = (s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

(WRK ? test : test.skip)(`${DURATION} s at ${CONNECTIONS} keep-alive connections: no errors, RSS stable, descriptors back to baseline`, async () => {
  // Warm up every path once (and take the ETags for conditional requests).
  const reqs = [];
  for (const p of paths) {
    const r = await get(server.port, p, { 'accept-encoding': 'br' });
    expect(r.status).toBe(200);
    const AES = ['br, gzip', 'gzip, deflate, br, zstd', 'gzip', '', 'identity'];
    reqs.push({ path: p, headers: { 'Accept-Encoding': AES[reqs.length % AES.length] } });
    if (reqs.length % 4 === 0 && r.headers.etag) reqs.push({ path: p, headers: { 'Accept-Encoding': 'br', 'If-None-Match': r.headers.etag } });
    if (reqs.length % 7 === 0) reqs.push({ path: p, headers: { 'Accept-Encoding': 'gzip', Range: 'bytes=0-99' } });
  }
  const script = path.join(dir, 'mixed.lua');
  await fsp.writeFile(script, [
    'local reqs = {',
    ...reqs.map((r) => `  { ${lua(r.path)}, { ${Object.entries(r.headers).filter(([, v]) => v !== '').map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(', ')} } },`),
    '}',
    'local i = 0',
    'request = function()',
    '  i = i + 1',
    '  local r = reqs[(i % #reqs) + 1]',
    '  return wrk.format("GET", r[1], r[2])',
    'end',
  ].join('\n'));

  const before = await server.stats();
  const samples = [];
  let running = true;
  const sampler = (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      if (running) samples.push((await server.stats()).rss);
    }
  })();
  const out = await new Promise((resolve, reject) => {
    execFile(/** @type {string} */ (WRK), ['-t2', `-c${CONNECTIONS}`, `-d${DURATION}s`, '--timeout', '10s', '-s', script, `http://127.0.0.1:${server.port}`],
      { maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
  running = false;
  await sampler;
  const after = await pollUntil(() => server.stats(), (s) => s.fds <= before.fds);

  const num = (re) => Number((re.exec(out) ?? [])[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const figures = {
    durationS: DURATION, connections: CONNECTIONS, distinctRequests: reqs.length,
    requests: num(/(\d+) requests in/), requestsPerSec: num(/Requests\/sec:\s+([\d.]+)/),
    non2xx3xx: num(/Non-2xx or 3xx responses: (\d+)/),
    socketErrors: socketErrors ? socketErrors.slice(1).map(Number) : [0, 0, 0, 0],
    rssBeforeMB: +(before.rss / MB).toFixed(1), rssSamplesMB: samples.map((r) => +(r / MB).toFixed(1)), rssAfterMB: +(after.rss / MB).toFixed(1),
    fdsBefore: before.fds, fdsAfter: after.fds, serverErrors: after.errors, wrk: out.split('\n').filter((l) => /Latency|Req\/Sec|requests in|Transfer/.test(l)).map((l) => l.trim()),
  };
  record('load', figures);
  expect(figures.requests).toBeGreaterThan(0);
  expect(figures.socketErrors).toEqual([0, 0, 0, 0]);
  expect(figures.non2xx3xx).toBe(0);
  expect(after.errors).toBe(0);
  expect(after.fds).toBe(before.fds);
  // No growth in the second half of the run: the lazy site builds its entries and fills its body
  // cache during the first half (warm-up), then the last sample is within 32 MB of the middle one.
  expect(samples[samples.length - 1] - samples[Math.floor(samples.length / 2)]).toBeLessThan(32 * MB);
});

/** Request `p`, read the headers and the first body bytes, then drop the connection. */
function abortMidBody(port, p, ae) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = 0;
    sock.on('data', (c) => {
      got += c.length;
      if (got > 1000) sock.destroy();
    });
    sock.on('close', () => resolve(got));
    sock.on('error', () => {});
    sock.write(`GET ${p} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${ae}\r\n\r\n`);
  });
}

test(`${ABORTS.toLocaleString('en')} downloads aborted mid-body: descriptors back to baseline, the server still answers`, async () => {
  // Files whose every representation is well over the bytes read before the abort (and streamed from disk).
  const isBig = (p) => ['', '.br', '.gz'].every((s) => (fs.statSync(path.join(dir, decodeURIComponent(p)) + s, { throwIfNoEntry: false })?.size ?? 0) > 128 * 1024);
  const big = ['/img/big.png', '/bundle-a.js', '/bundle-b.js'];
  expect(big.slice(1).every(isBig)).toBe(true); // big.png has no variants (compressed format)
  const before = await server.stats();
  let next = 0;
  let bytes = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < ABORTS) {
      const i = next++;
      bytes += await abortMidBody(server.port, big[i % big.length], ['br', 'gzip', 'identity'][i % 3]);
    }
  }));
  const peak = await server.stats();
  const after = await pollUntil(() => server.stats(), (s) => s.fds <= before.fds);
  const ok = await get(server.port, '/img/big.png');
  record('aborts', { aborted: ABORTS, files: big.length, bytesReadBeforeAbort: bytes, fdsBefore: before.fds, fdsJustAfter: peak.fds, fdsAfter: after.fds, rssAfterMB: +(after.rss / MB).toFixed(1) });
  expect(after.fds).toBe(before.fds);
  expect(ok.status).toBe(200);
  expect(ok.length).toBe(4 * MB);
});
