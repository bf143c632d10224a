import fs from 'node:fs/promises';
import net from 'node:net';
import { startPreview } from '../../lib/index.js';
import { makeSite, request, decode } from '../helpers/serve-site.js';

/**
 * A site of `files` (makeSite's `siteOptions`) previewed with `options`, given to `body` with its port;
 * closed and removed once `body` has ended. Resolves with what `body` returns.
 */
async function withPreview(files, options, body, siteOptions = undefined) {
  const site = await makeSite(files, siteOptions);
  const p = await startPreview({ root: site.dir, ...options });
  try {
    return await body(p, Number(new URL(p.url).port), site);
  } finally {
    await p.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
}

test('startPreview serves a built site on a free port and prints its URL', () =>
  withPreview({ 'index.html': '<h1>preview</h1>'.repeat(20) }, { maxAge: '1m' }, async (p, port) => {
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const r = await request(port, '/', { headers: { 'accept-encoding': 'br' } });
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('public, max-age=60');
    expect(decode(r).toString()).toContain('<h1>preview</h1>');
    expect((await request(port, '/nope')).status).toBe(404);
  }));

test('startPreview rejects when the port is taken, and when the manifest is missing', async () => {
  const site = await makeSite({ 'a.txt': 'a' });
  const blocker = net.createServer();
  await new Promise((r) => blocker.listen(0, '127.0.0.1', r));
  try {
    await expect(startPreview({ root: site.dir, port: blocker.address().port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await fs.rm(site.manifestPath);
    await expect(startPreview({ root: site.dir })).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST' });
  } finally {
    blocker.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});

/** A client that sends a GET and never reads the response (its socket paused from the start). */
function stalledClient(port, target) {
  const sock = net.connect(port, '127.0.0.1');
  sock.pause();
  sock.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n`);
  return sock;
}

/** Read what the socket still holds, to its end: the bytes received in all. */
function drain(sock) {
  return new Promise((resolve) => {
    let n = 0;
    sock.on('data', (c) => (n += c.length));
    sock.on('close', () => resolve(n));
    sock.on('error', () => {});
    sock.resume();
  });
}

/** Resolves with the first `count` server-side sockets, each with a promise of its close. */
function serverSockets(server, count) {
  return new Promise((resolve) => {
    const seen = [];
    server.on('connection', (s) => {
      seen.push(new Promise((r) => s.on('close', r)));
      if (seen.length === count) resolve(seen);
    });
  });
}

test('a client that stops reading a large response is closed after the timeout (stalled send)', async () => {
  const big = Buffer.alloc(16 << 20, 'x'); // far above what the socket buffers hold
  await withPreview({ 'big.bin': big }, { timeout: 200 }, async (p, port) => {
    const opened = serverSockets(p.server, 3);
    const clients = Array.from({ length: 3 }, () => stalledClient(port, '/big.bin'));
    // the server closes every one of them itself: the clients never read nor close
    await Promise.all(await opened);
    const received = await Promise.all(clients.map(drain));
    for (const n of received) expect(n).toBeLessThan(big.length);
  }, { noVariants: ['big.bin'] });
});

test('a connection beyond maxConnections is closed at once when every other one is answering; the limits are checked', async () => {
  const big = Buffer.alloc(16 << 20, 'x');
  const dir = await withPreview({ 'big.bin': big }, { maxConnections: 2 }, async (p, port, site) => {
    // both requests arrived: the connections are answering them, so neither is closed for a newcomer
    const asked = new Promise((r) => {
      let n = 0;
      p.server.on('request', () => ++n === 2 && r(undefined));
    });
    const held = [stalledClient(port, '/big.bin'), stalledClient(port, '/big.bin')];
    await asked;
    const extra = stalledClient(port, '/big.bin');
    expect(await drain(extra)).toBe(0);
    for (const s of held) s.destroy();
    return site.dir;
  }, { noVariants: ['big.bin'] });
  await expect(startPreview({ root: dir, timeout: 'soon' })).rejects.toThrow('Expected options.timeout to be a number of milliseconds or a duration string like "30s", got "soon" (string)');
  await expect(startPreview({ root: dir, maxConnections: 0 })).rejects.toThrow('Expected options.maxConnections to be a positive integer, got 0 (number)');
  await expect(startPreview({ root: dir, headersTimeout: '1m', requestTimeout: '10s' })).rejects.toThrow(/Expected options.headersTimeout to be at most options.requestTimeout/);
});

/** The server's sockets in the order it accepts them; `next()` resolves with the next one. */
function acceptLog(server) {
  const sockets = [];
  const waiting = [];
  server.on('connection', (s) => {
    sockets.push(s);
    waiting.shift()?.(s);
  });
  return { sockets, next: () => new Promise((r) => waiting.push(r)) };
}

test('at maxConnections a newcomer closes the connection idle longest, not one answering a request', () =>
  withPreview({ 'a.txt': 'hello\n', 'big.bin': Buffer.alloc(16 << 20, 'x') }, { maxConnections: 3 }, async (p, port) => {
    const log = acceptLog(p.server);
    const clients = [];
    try {
      // the oldest connection answers a download it never reads; then two idle ones, one header byte each
      const asked = new Promise((r) => p.server.once('request', r));
      clients.push(stalledClient(port, '/big.bin'));
      await log.next();
      await asked;
      for (let i = 0; i < 2; i++) {
        const s = net.connect(port, '127.0.0.1');
        s.on('error', () => {});
        s.write('G');
        clients.push(s);
        await log.next();
      }
      const [busy, idleOld, idleNew] = log.sockets;
      const evicted = new Promise((r) => idleOld.once('close', r));
      const r = await request(port, '/a.txt');
      expect(r.status).toBe(200);
      expect(r.body.toString()).toBe('hello\n');
      await evicted;
      expect(busy.destroyed).toBe(false);
      expect(idleNew.destroyed).toBe(false);
    } finally {
      for (const s of clients) s.destroy();
    }
  }, { noVariants: ['big.bin'] }));

test('an idle connection is closed after the timeout, plainly: it has nothing waiting to be sent', () =>
  withPreview({ 'a.txt': 'a' }, { timeout: 200 }, async (_p, port) => {
    const client = net.connect(port, '127.0.0.1');
    // a FIN ends the stream; a reset would be an error
    const how = await new Promise((resolve) => {
      client.on('error', (err) => resolve(err.code));
      client.on('end', () => resolve('end'));
      client.resume();
    });
    expect(how).toBe('end');
    client.destroy();
  }));

test('a kept-alive connection is idle from its last answer, not from when it connected', () =>
  withPreview({ 'a.txt': 'hello\n' }, { maxConnections: 2 }, async (p, port) => {
    const log = acceptLog(p.server);
    const clients = [];
    const open = () => {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      clients.push(s);
      return s;
    };
    try {
      const first = open();
      await log.next();
      open().write('G'); // idle since it connected, after the first one
      await log.next();
      // the first one is answered now: idle since then, the later of the two
      const answered = new Promise((r) => p.server.once('request', (req, res) => res.once('close', r)));
      first.write('GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered;
      const [older, second] = log.sockets;
      const evicted = new Promise((r) => second.once('close', r));
      open();
      await evicted;
      expect(older.destroyed).toBe(false);
    } finally {
      for (const s of clients) s.destroy();
    }
  }));

test('a stalled download is reset by the stall watch, not closed by node:http\'s own timer', () =>
  withPreview({ 'big.bin': Buffer.alloc(16 << 20, 'x') }, { timeout: 1000 }, async (p, port) => {
    let client;
    try {
      const asked = new Promise((r) => p.server.once('request', (req) => r(req.socket)));
      client = stalledClient(port, '/big.bin');
      const socket = await asked;
      // Observe the close itself, not a clock: node:http's own timer (twice the timeout for a stalled
      // download) would close with a FIN; only the stall watch resets, which the client's write tells below.
      if (!socket.destroyed) await new Promise((r) => socket.once('close', r));
      // reset, not closed: the client's next write fails (a closed socket would take it). Reading
      // would not tell: older libuv (1.49, Node 22.12) reports a reset behind unread bytes as EOF
      const told = await new Promise((resolve) => {
        client.on('error', (err) => resolve(err.code));
        client.write('x', (err) => err || resolve('written'));
      });
      expect(told).toBe('ECONNRESET');
    } finally {
      client?.destroy();
    }
  }, { noVariants: ['big.bin'] }));

test('a request head that stops arriving is closed at --headers-timeout, checked every second', () =>
  withPreview({ 'a.txt': 'a' }, { headersTimeout: 200, requestTimeout: 200 }, async (p, port) => {
    let client;
    try {
      const accepted = new Promise((r) => p.server.once('connection', r));
      client = net.connect(port, '127.0.0.1');
      client.on('error', () => {});
      client.write('GET /a.txt HTTP/1.1\r\nHost: x\r\n'); // never ends its head
      const socket = await accepted;
      // node:http checks the deadlines every connectionsCheckingInterval (30 s unless set): this timer,
      // due after the head's deadline and the next check, finds the connection closed
      const closedAtCheck = await new Promise((r) => setTimeout(() => r(socket.destroyed), 200 + 1000 + 500));
      expect(closedAtCheck).toBe(true);
    } finally {
      client?.destroy();
    }
  }));
