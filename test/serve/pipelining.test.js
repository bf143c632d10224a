// Pipelined requests (#27 item 1): node:http emits every request a client pipelines at once, and a
// response queued behind another has no socket until its turn. serveStatic opens and reads a file
// only for the response the socket is sending; `precompressor serve` also closes a connection
// with more than MAX_PIPELINED requests waiting.

import fs from 'node:fs/promises';
import net from 'node:net';
import Fastify from 'fastify';
import { serveStatic, startPreview } from '../../lib/index.js';
import { precompressor } from '../../lib/serve/adapters/fastify.js';
import { MAX_PIPELINED } from '../../lib/serve/adapters/connections.js';
import { makeSite, listen } from '../helpers/serve-site.js';

const get = (target) => `GET ${target} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n`;

/**
 * Read the responses of `count` pipelined requests (each with a Content-Length) from `sock`, to
 * the last byte of the last one or until the connection closes.
 * @returns {Promise<{ heads: string[], bodies: Buffer[], closed: boolean }>}
 */
function readResponses(sock, count) {
  return new Promise((resolve) => {
    const chunks = [];
    let have = 0;
    let need = 4; // bytes wanted before looking again: a head's end, then its body's
    const heads = [];
    const bodies = [];
    const done = (closed) => resolve({ heads, bodies, closed });
    sock.on('data', (chunk) => {
      chunks.push(chunk);
      have += chunk.length;
      while (have >= need) {
        let buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) {
          need = have + 1;
          break;
        }
        const head = buf.subarray(0, end).toString('latin1');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) {
          need = end + 4 + length;
          break;
        }
        heads.push(head);
        bodies.push(buf.subarray(end + 4, end + 4 + length));
        buf = buf.subarray(end + 4 + length);
        chunks.length = 0;
        chunks.push(buf);
        have = buf.length;
        need = 4;
        if (heads.length === count) return done(false);
      }
    });
    sock.on('close', () => done(true));
    sock.on('error', () => {});
    sock.resume();
  });
}

test('serveStatic opens a pipelined request\'s file only once its response owns the socket', async () => {
  const big = Buffer.alloc(2 << 20);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32BE(i, i); // any misplaced byte shows
  const site = await makeSite({ 'big.bin': big }, { noVariants: ['big.bin'] });
  const mw = serveStatic(site.dir);
  const N = 12;
  /** @type {boolean[]} whether each queued response had written its head when its turn came */
  const writtenBeforeTurn = [];
  let received = 0;
  let allReceived;
  const all = new Promise((r) => (allReceived = r));
  const srv = await listen((req, res) => {
    if (res.socket === null) res.once('socket', () => writtenBeforeTurn.push(res.headersSent));
    mw(req, res);
    if (++received === N) allReceived();
  });
  const sock = net.connect(srv.port, '127.0.0.1');
  try {
    sock.pause();
    sock.write(get('/big.bin').repeat(N));
    await all; // every request emitted while the client reads nothing
    const { heads, bodies } = await readResponses(sock, N);
    expect(heads).toHaveLength(N);
    for (const head of heads) expect(head).toMatch(/^HTTP\/1\.1 200 /);
    for (const body of bodies) expect(body.equals(big)).toBe(true);
    expect(writtenBeforeTurn).toEqual(Array(N - 1).fill(false));
  } finally {
    sock.destroy();
    mw.close();
    await srv.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});

test('precompressor/fastify also waits for a pipelined request\'s turn before it opens the file', async () => {
  const big = Buffer.alloc(2 << 20);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32BE(i, i);
  const site = await makeSite({ 'big.bin': big }, { noVariants: ['big.bin'] });
  const app = Fastify();
  const N = 8;
  const writtenBeforeTurn = [];
  let received = 0;
  let allReceived;
  const all = new Promise((r) => (allReceived = r));
  app.addHook('onRequest', (request, reply, done) => {
    if (reply.raw.socket === null) reply.raw.once('socket', () => writtenBeforeTurn.push(reply.raw.headersSent));
    if (++received === N) allReceived();
    done();
  });
  await app.register(precompressor, { root: site.dir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const sock = net.connect(app.server.address().port, '127.0.0.1');
  try {
    sock.pause();
    sock.write(get('/big.bin').repeat(N));
    await all;
    const { heads, bodies } = await readResponses(sock, N);
    expect(heads).toHaveLength(N);
    for (const body of bodies) expect(body.equals(big)).toBe(true);
    expect(writtenBeforeTurn).toEqual(Array(N - 1).fill(false));
  } finally {
    sock.destroy();
    await app.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});

test(`precompressor serve answers ${MAX_PIPELINED} pipelined requests and closes a connection with more waiting`, async () => {
  const site = await makeSite({ 'a.txt': 'pipelined\n' });
  const p = await startPreview({ root: site.dir });
  const port = Number(new URL(p.url).port);
  try {
    const ok = net.connect(port, '127.0.0.1');
    ok.write(get('/a.txt').repeat(MAX_PIPELINED));
    const answered = await readResponses(ok, MAX_PIPELINED);
    ok.destroy();
    expect(answered.heads).toHaveLength(MAX_PIPELINED);
    for (const body of answered.bodies) expect(body.toString()).toBe('pipelined\n');

    const over = net.connect(port, '127.0.0.1');
    over.write(get('/a.txt').repeat(MAX_PIPELINED + 1));
    const cut = await readResponses(over, MAX_PIPELINED + 1);
    expect(cut.closed).toBe(true);
    expect(cut.heads.length).toBeLessThan(MAX_PIPELINED + 1);
  } finally {
    await p.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});
