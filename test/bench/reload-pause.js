// The longest time serveStatic blocks the event loop while it reloads its manifest and requests run:
//
//   node test/bench/scale-listed.js <dir>                       # a manifest of 10^6 lines
//   node test/bench/reload-pause.js <dir> [--checkout <repo root>] [--reloads 3] [--clients 4] [--watch]
//
// Starts serveStatic(<dir>) from <checkout> (default: this one; --watch: with its watchers) on port 0, keeps --clients
// requests for <dir>/probes.txt's paths in flight, and reloads the manifest --reloads times, one
// after the other. Per reload: its wall time, the longest event-loop block (monitorEventLoopDelay's
// max, and the longest gap of a 1 ms setInterval, in wall time and in this thread's CPU time: on
// a loaded machine the wall time also counts the time the thread waited for a core), the requests answered meanwhile and the
// non-200 ones. Prints one JSON line per reload.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { checkout: { type: 'string', default: here }, reloads: { type: 'string', default: '3' }, clients: { type: 'string', default: '4' }, watch: { type: 'boolean', default: false } },
});
const [dir] = positionals;
if (!dir) throw new Error('usage: node test/bench/reload-pause.js <dir> [--checkout <repo root>] [--reloads N] [--clients N]');
const { serveStatic } = await import(pathToFileURL(path.join(path.resolve(args.checkout), 'lib/index.js')).href);
const probes = fs.readFileSync(path.join(dir, 'probes.txt'), 'utf8').split('\n').filter(Boolean);

const mw = serveStatic(dir, { watch: args.watch, onWarning: null });
const server = http.createServer((req, res) => mw(req, res, () => { res.statusCode = 404; res.end(); }));
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
const agent = new http.Agent({ keepAlive: true });

/** @param {string} p @returns {Promise<number>} the status */
const get = (p) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port, path: p, agent, headers: { 'accept-encoding': 'br' } }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode ?? 0));
  }).on('error', reject);
});

const counts = { answered: 0, bad: 0 };
let running = true;
/** One client: a request after another until stopped. */
async function client(k) {
  for (let i = k; running; i += 7) {
    const status = await get(probes[i % probes.length]);
    counts.answered++;
    if (status !== 200) counts.bad++;
  }
}
const clients = Array.from({ length: Number(args.clients) }, (_, k) => client(k));
await new Promise((resolve) => setTimeout(resolve, 500)); // warm up: the entries built

/** CPU time of this thread (of the process where Node has no process.threadCpuUsage()). */
function threadCpuMs() {
  const u = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage() : process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const loop = monitorEventLoopDelay({ resolution: 1 });
for (let r = 0; r < Number(args.reloads); r++) {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let gap = 0;
  let cpuGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    const cpuNow = threadCpuMs();
    gap = Math.max(gap, now - last);
    cpuGap = Math.max(cpuGap, cpuNow - lastCpu);
    last = now;
    lastCpu = cpuNow;
  }, 1);
  Object.assign(counts, { answered: 0, bad: 0 });
  loop.reset();
  loop.enable();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await mw.reload();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  clearInterval(tick);
  process.stdout.write(JSON.stringify({
    reload: r + 1, wallMs: Math.round(wallMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    maxBlockMs: Math.round(loop.max / 1e6), maxGapMs: Math.round(gap), maxGapCpuMs: Math.round(cpuGap), answered: counts.answered, non200: counts.bad,
    size: mw.size(),
  }) + '\n');
  await new Promise((resolve) => setTimeout(resolve, 300));
}
running = false;
await Promise.all(clients);
agent.destroy();
server.close();
