// Our own cost per request, without the network: serveStatic called in process on node:http's
// IncomingMessage/ServerResponse (no socket), against the `node-http-ceiling` row's handler of
// ./serve.js (./serve-ceiling.js: each URL's header array and body from memory). The gap
// between the two is the middleware's own work; wrk's figures on a shared 2-core machine vary
// more than that from run to run.
//
//   node --expose-gc test/bench/serve-cost.js <compressed dir> [--rounds 9] [--requests 40000]
//                                              [--against <other checkout>[=<its compressed dir>]]
//
// Only the URLs answered from memory are used (a streamed file answers later, on the libuv pool).
// Handlers alternate every round (in reverse order every other round); the median CPU time is printed.

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { listFiles } from './corpus.js';
import { ceilingHandler, ceilingResponses } from './serve-ceiling.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '9' }, requests: { type: 'string', default: '40000' }, against: { type: 'string' } },
});
const root = path.resolve(positionals[0] ?? '');
if (!positionals[0] || !fs.existsSync(path.join(root, 'precompressor-manifest.json'))) {
  console.error('usage: node --expose-gc test/bench/serve-cost.js <dir compressed by bin/precompressor.js> [--against <checkout>[=<dir>]]');
  process.exit(2);
}

/** serveStatic of a checkout (lib/serve/adapters/middleware.js, or lib/serve.js before the #10 layout). */
async function middlewareOf(checkout, dir) {
  const split = path.join(checkout, 'lib/serve/adapters/middleware.js');
  const file = fs.existsSync(split) ? split : path.join(checkout, 'lib/serve.js');
  const { serveStatic } = await import(pathToFileURL(file).href);
  return serveStatic(dir, { watch: false });
}

// the ceiling row's handler: each URL's header array and body, from memory
const fixed = ceilingHandler(await ceilingResponses(root, repoRoot), (res) => { res.statusCode = 404; res.end(); });
const handlers = [{ name: 'fixed response (ceiling)', handle: fixed }];
handlers.push({ name: `serveStatic (${repoRoot})`, handle: await middlewareOf(repoRoot, root) });
if (args.against) {
  const [checkout, dir = root] = args.against.split('=');
  handlers.push({ name: `serveStatic (${path.resolve(checkout)})`, handle: await middlewareOf(path.resolve(checkout), path.resolve(dir)) });
}

const socket = new net.Socket();
/** One GET through `handle`, as wrk sends it; returns the response. */
function one(handle, url) {
  const req = new http.IncomingMessage(socket);
  req.method = 'GET';
  req.url = url;
  req.rawHeaders = ['Host', '127.0.0.1', 'Accept-Encoding', 'br, gzip'];
  // node:http's parser fills req.headers (and its server reads them for every request); an
  // IncomingMessage made by hand has none, and would be answered with identity
  req.headers = { host: '127.0.0.1', 'accept-encoding': 'br, gzip' };
  const res = new http.ServerResponse(req);
  handle(req, res, () => { res.statusCode = 404; res.end(); });
  return res;
}

const files = await listFiles(root);
const all = files.filter((f) => !/\.(br|gz|zst|dcb|dcz)$/.test(f.rel) && f.rel !== 'precompressor-manifest.json')
  .map((f) => '/' + f.rel.split('/').map(encodeURIComponent).join('/'));
// A path's first requests are answered from disk (its check, then its body read into the cache): warm
// every handler the way a server's first requests would, then keep the URLs answered at once.
for (let pass = 0; pass < 3; pass++) {
  for (const h of handlers.slice(1)) for (const u of all) one(h.handle, u);
  for (const h of handlers.slice(1)) await /** @type {any} */ (h.handle).settled?.();
  await new Promise((resolve) => setTimeout(resolve, 300));
}
const urls = all.filter((u) => handlers.slice(1).every((h) => one(h.handle, u).writableEnded));
console.log(`${urls.length} of ${all.length} URLs answered from memory; ${args.rounds} rounds of ${args.requests} requests per handler`);
const n = Number(args.requests);
const times = handlers.map(() => /** @type {number[]} */ ([]));
for (let r = 0; r < Number(args.rounds); r++) {
  const order = handlers.map((_, i) => i);
  if (r % 2 === 1) order.reverse();
  for (const i of order) {
    globalThis.gc?.();
    // CPU time (all threads: the collector's helpers too), not wall time: the machine is shared
    const t0 = process.cpuUsage();
    for (let k = 0; k < n; k++) one(handlers[i].handle, urls[k % urls.length]);
    const t = process.cpuUsage(t0);
    times[i].push(((t.user + t.system) * 1000) / n);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const base = median(times[0]);
for (const [i, h] of handlers.entries()) {
  const m = median(times[i]);
  console.log(`${h.name}: ${(m / 1000).toFixed(2)} µs per request (median)${i === 0 ? '' : `, ${((m - base) / 1000).toFixed(2)} µs above the fixed response`}`);
}
for (const h of handlers) /** @type {any} */ (h.handle).close?.();
