// A node:http server around serveStatic in its own process, so that the reliability suites can
// watch it crash (or not) and read its RSS and open descriptors from /proc without counting
// their own. Usage (with an IPC channel): fork('server-child.js', [root, jsonOptions])
// Sends { port } when listening; answers 'stats' with { rss, fds, heapUsed } (after a GC when
// started with --expose-gc), 'settled' with 'settled' once pending re-checks are done, and 'reload'
// with { reloaded, error, memory } once the manifest is read again.

import fs from 'node:fs';
import http from 'node:http';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';

const [root, json] = process.argv.slice(2);
const mw = serveStatic(root, json ? JSON.parse(json) : {});
let errors = 0;
const server = http.createServer((req, res) => {
  mw(req, res, (/** @type {any} */ err) => {
    const status = err ? (err.status ?? 500) : 404;
    if (status >= 500) errors++;
    res.statusCode = status;
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.send?.({ port: addr.port });
});

process.on('message', async (msg) => {
  if (msg === 'stats') {
    /** @type {any} */ (globalThis).gc?.();
    process.send?.({
      rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed,
      fds: fs.readdirSync('/proc/self/fd').length, errors,
    });
  } else if (msg === 'settled') {
    await mw.settled();
    process.send?.('settled');
  } else if (msg === 'reload') {
    const error = await mw.reload().then(() => null, (/** @type {Error} */ e) => e.message);
    process.send?.({ reloaded: true, error, memory: mw.memory() });
  } else if (msg === 'close') {
    mw.close();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
