// One server of the scale benchmark, in its own process:
//   node test/bench/scale-server.js <kind> <root> <peer node_modules> <repo root> <probe paths file>
// Measures, inside the process, the time (wall and CPU) from the call that makes the handler to the
// end of the first answered request, and the RSS then and after a pass over the probe paths. Prints one JSON line.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [kind, root, modules, repoRoot, probesFile] = process.argv.slice(2);
const peer = createRequire(path.join(path.resolve(modules || '.'), 'bench-entry.js'));
const probes = fs.readFileSync(probesFile, 'utf8').split('\n').filter(Boolean);
const notFound = (res) => { res.statusCode = 404; res.end('Not found'); };

/** kind → () => a request handler, made synchronously or not (the clock runs from the call). */
const HANDLERS = {
  async precompressor() {
    const { serveStatic } = await import(pathToFileURL(path.join(repoRoot, 'lib/index.js')).href);
    return () => serveStatic(root, { watch: false });
  },
  async sirv() {
    const sirv = peer('sirv');
    return () => (sirv.default ?? sirv)(root, { dev: false, brotli: true, gzip: true, etag: true });
  },
};

/** GET `p` with br accepted; resolves with the status and the number of body bytes. */
function get(port, p) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p, headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
      let n = 0;
      res.on('data', (d) => { n += d.length; });
      res.on('end', () => resolve({ status: res.statusCode, bytes: n, encoding: res.headers['content-encoding'] ?? 'identity' }));
    }).on('error', reject);
  });
}

const factory = await HANDLERS[kind]();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const handler = await factory();
const server = http.createServer((req, res) => handler(req, res, () => notFound(res)));
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
const first = await get(port, probes[0]);
const firstMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const firstCpuMs = (cpu.user + cpu.system) / 1000;
const rssFirstMB = process.memoryUsage().rss / 2 ** 20;
let bad = first.status === 200 ? 0 : 1;
let peakMB = rssFirstMB;
for (let i = 1; i < probes.length; i++) {
  const r = await get(port, probes[i]);
  if (r.status !== 200) bad++;
  if (i % 500 === 0) peakMB = Math.max(peakMB, process.memoryUsage().rss / 2 ** 20);
}
peakMB = Math.max(peakMB, process.memoryUsage().rss / 2 ** 20);
process.stdout.write(JSON.stringify({ firstMs, firstCpuMs, rssFirstMB, rssAfterMB: peakMB, probes: probes.length, bad, firstEncoding: first.encoding }) + '\n');
server.close();
process.exit(0);
