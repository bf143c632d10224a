// A served folder that someone else can write (issue 17, items 10 and 13), attacked while the
// server runs:
// - folder swap race: thousands of requests while a folder flips between a real folder and a
//   symlink to an outside folder holding files of the same names, sizes and mtimes with secret
//   bytes; in manifest mode (every representation streamed) and with `unlisted`. Must hold:
//   no response carries a byte of the outside files; no 5xx; the server never dies.
// - stalled clients: 1,200 sockets that ask for a 16 MiB file and never read, against
//   startPreview() with a 5 s timeout and the default connection cap: every connection is closed
//   by the server, never more than the cap open at once (how many are closed at accept depends
//   on how fast the clients connect; test/serve/preview.test.js checks the cap deterministically).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';
import { execFileSync, spawn } from 'node:child_process';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { startPreview } from '../../lib/serve/adapters/preview.js';
import { PREVIEW_LIMITS } from '../../lib/serve/http/options.js';
import { record, startServer, REPO } from './helpers.js';

const REQUESTS = 3_000;
const CONCURRENCY = 16;
const MARK = 'OUTSIDE-ROOT-BYTES-';

let base;
afterAll(async () => {
  if (base) await fsp.rm(base, { recursive: true, force: true });
});

/** Same size, same mtime to the nanosecond, every byte from MARK: passes a size and mtime check. */
function lookalike(from, to) {
  const st = fs.statSync(from, { bigint: true });
  fs.writeFileSync(to, MARK.repeat(Math.ceil(Number(st.size) / MARK.length)).slice(0, Number(st.size)));
  execFileSync('touch', ['-m', '-d', `@${st.mtimeNs / 1_000_000_000n}.${String(st.mtimeNs % 1_000_000_000n).padStart(9, '0')}`, to]);
}

function get(port, target, ae) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, headers: { 'accept-encoding': ae }, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      res.on('error', () => resolve({ status: -1, body: Buffer.concat(chunks) }));
    });
    req.on('error', () => resolve({ status: -1, body: Buffer.alloc(0) }));
  });
}

/** Put the real folder back at `sub` wherever the killed flipper left it, and remove the link. */
async function restore(sub) {
  const st = await fsp.lstat(sub).catch(() => null);
  if (st?.isDirectory()) return fsp.rm(`${sub}.link`, { force: true });
  await fsp.rm(sub, { force: true }); // the symlink, if that is what is there
  await fsp.rm(`${sub}.link`, { force: true });
  await fsp.rename(`${sub}.real`, sub);
}

const linux = process.platform === 'linux' ? test : test.skip;

linux(`folder swap race: ${REQUESTS.toLocaleString('en')} requests per mode while a folder flips to a symlink out of root`, async () => {
  base = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-hostile-fs-'));
  const root = path.join(base, 'site');
  const outside = path.join(base, 'outside');
  const sub = path.join(root, 'sub');
  await fsp.mkdir(sub, { recursive: true });
  await fsp.mkdir(outside);
  const names = ['a.js', 'b.css', 'c.json'];
  for (const [i, n] of names.entries()) await fsp.writeFile(path.join(sub, n), `/* inside ${n} */ ${'x'.repeat(40 + i)};\n`.repeat(3000));
  await fsp.writeFile(path.join(root, 'index.html'), '<p>home</p>');
  expect((await precompress(root, { brotliQuality: 5, cache: false })).ok).toBe(true);
  for (const f of await fsp.readdir(sub)) lookalike(path.join(sub, f), path.join(outside, f));

  const modes = { manifest: { memoryFileLimit: 0 }, unlisted: { unlisted: true, manifest: false } };
  const results = {};
  for (const [mode, options] of Object.entries(modes)) {
    const server = await startServer(root, options);
    await fsp.rename(sub, `${sub}.real`);
    await fsp.symlink(outside, `${sub}.link`);
    const args = [sub, `${sub}.real`, `${sub}.link`, ...(mode === 'manifest' ? [path.join(root, 'precompressor-manifest.json')] : [])];
    const flipper = spawn(process.execPath, [path.join(REPO, 'test/reliability/flipper.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let flips = 0;
    await new Promise((resolve) => flipper.stdout.on('data', (d) => {
      flips = Number(String(d).trim().split('\n').pop());
      resolve(undefined);
    }));
    const counts = { leaked: 0, ok: 0, missing: 0, error5xx: 0, failed: 0 };
    let next = 0;
    async function worker() {
      while (next < REQUESTS) {
        const i = next++;
        const res = await get(server.port, `/sub/${names[i % names.length]}`, i % 2 ? 'br, gzip' : 'identity');
        if (res.body.includes(MARK)) counts.leaked++;
        else if (res.status === 200) counts.ok++;
        else if (res.status === 404) counts.missing++;
        else if (res.status >= 500) counts.error5xx++;
        else counts.failed++; // connection destroyed mid-body (the file changed under the read)
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    flipper.kill('SIGKILL');
    await new Promise((r) => flipper.once('exit', r));
    const alive = !server.exited();
    await server.close();
    await restore(sub);
    results[mode] = { ...counts, flipsAtStart: flips, alive };
    expect(counts.leaked).toBe(0);
    expect(counts.error5xx).toBe(0);
    expect(alive).toBe(true);
  }
  record('hostile-fs: folder swap race', { requestsPerMode: REQUESTS, concurrency: CONCURRENCY, ...results });
});

linux('1,200 stalled clients: every connection is closed by the server, never more than the cap open', async () => {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-stalled-'));
  try {
    await fsp.writeFile(path.join(dir, 'big.bin'), Buffer.alloc(16 << 20, 'x'));
    expect((await precompress(dir, { cache: false, encodings: ['gzip'], gzipLevel: 1 })).ok).toBe(true);
    const p = await startPreview({ root: dir, timeout: '5s' });
    const port = Number(new URL(p.url).port);
    // Each client is matched to what the server did with it by its port: accepted (then closed by
    // the server, at once when over the cap), or failed before (refused by the kernel).
    /** @type {Map<number, { kind: string, closed?: Promise<unknown> }>} */
    const seen = new Map();
    const waiters = new Map();
    const note = (/** @type {number} */ remotePort, /** @type {any} */ v) => {
      seen.set(remotePort, v);
      waiters.get(remotePort)?.(v);
    };
    // Over the cap, the server's own 'connection' listener closes the connection idle longest, or
    // the newcomer when every other one is answering: before it, each socket is noted with its port;
    // after it, what is still open is counted.
    let dropped = 0;
    let peak = 0;
    const live = new Set();
    p.server.prependListener('connection', (s) => {
      note(s.remotePort, { kind: 'accepted', closed: new Promise((r) => s.on('close', r)) });
    });
    p.server.on('connection', (s) => {
      if (s.destroyed) dropped++;
      else live.add(s);
      for (const o of live) if (o.destroyed) live.delete(o);
      peak = Math.max(peak, live.size);
    });
    const outcome = (/** @type {net.Socket} */ sock) => new Promise((resolve) => {
      sock.on('error', () => resolve({ kind: 'failed' }));
      sock.once('connect', () => {
        const local = /** @type {number} */ (sock.localPort);
        if (seen.has(local)) resolve(seen.get(local));
        else waiters.set(local, resolve);
      });
    });
    const started = Date.now();
    const clients = [];
    for (let i = 0; i < 1200; i++) {
      const sock = net.connect(port, '127.0.0.1');
      sock.pause();
      sock.write('GET /big.bin HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n');
      clients.push(sock);
    }
    const outcomes = /** @type {{ kind: string, closed?: Promise<unknown> }[]} */ (await Promise.all(clients.map(outcome)));
    const accepted = outcomes.filter((o) => o.kind === 'accepted');
    const failed = outcomes.filter((o) => o.kind === 'failed').length;
    // the clients never read nor close: every accepted connection must be closed by the server
    await Promise.all(accepted.map((o) => o.closed));
    const seconds = (Date.now() - started) / 1000;
    const left = await new Promise((r) => p.server.getConnections((_e, n) => r(n)));
    for (const s of clients) s.destroy();
    await p.close();
    record('hostile-fs: stalled clients', { clients: 1200, accepted: accepted.length, dropped, failedBeforeAccept: failed, peakOpen: peak, openAfter: left, secondsToCloseAll: seconds, timeoutSeconds: 5, maxConnections: PREVIEW_LIMITS.maxConnections });
    expect(left).toBe(0);
    expect(peak).toBeLessThanOrEqual(PREVIEW_LIMITS.maxConnections);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
});
