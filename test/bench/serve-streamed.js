// The cost of the descriptor checks on responses streamed from disk (issue 17): wrk against
// serveStatic of this checkout and of another one, in interleaved rounds on the same files, for
// the paths that open a file per request: manifest mode with every representation streamed
// (`memoryFileLimit: 0`: the dev/ino comparison) and `unlisted` (the descriptor's real path).
//
//   node test/bench/serve-streamed.js <compressed dir> --against <other checkout> [--rounds 6] [--seconds 5]
//
// Each server runs test/reliability/server-child.js of its own checkout in a child process; wrk
// (1 thread, 16 connections) cycles through every original file of the folder with
// `Accept-Encoding: br, gzip`. The figure is the server process's CPU time (user + system, from
// /proc) per request, which other jobs on a shared machine disturb far less than req/s; printed
// per round, as the median of each, and as the median of the per-round ratios (ours / other).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fork, execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { listFiles } from './corpus.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { against: { type: 'string' }, rounds: { type: 'string', default: '6' }, seconds: { type: 'string', default: '5' } },
});
const root = path.resolve(positionals[0] ?? '');
if (!positionals[0] || !args.against) {
  console.error('usage: node test/bench/serve-streamed.js <dir compressed by bin/precompressor.js> --against <checkout>');
  process.exit(2);
}

function start(checkout, options) {
  const child = fork(path.join(checkout, 'test/reliability/server-child.js'), [root, JSON.stringify(options)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve) => child.once('message', (m) => resolve({ child, port: /** @type {any} */ (m).port })));
}

const files = (await listFiles(root)).filter((f) => !/\.(br|gz|zst|dcb|dcz)$/.test(f.rel) && f.rel !== 'precompressor-manifest.json');
const lua = path.join(os.tmpdir(), `pc-streamed-${process.pid}.lua`);
const paths = files.map((f) => '/' + f.rel.split('/').map(encodeURIComponent).join('/'));
fs.writeFileSync(lua, `local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}\nlocal i = 0\n` +
  'request = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i], { ["Accept-Encoding"] = "br, gzip" })\nend\n');

/** CPU time (user + system) of a process so far, in clock ticks. */
function cpuTicks(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** One wrk run against `server`: the server's CPU µs per request. */
function wrk(server) {
  const before = cpuTicks(server.child.pid);
  const out = execFileSync('wrk', ['-t1', '-c16', `-d${args.seconds}s`, '-s', lua, `http://127.0.0.1:${server.port}/`]).toString();
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return ((cpuTicks(server.child.pid) - before) * TICK_US) / requests;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const modes = { 'manifest, all streamed': { watch: false, memoryFileLimit: 0 }, unlisted: { watch: false, unlisted: true, manifest: false } };
console.log(`${paths.length} files; ${args.rounds} interleaved rounds of ${args.seconds} s per server and mode`);
for (const [mode, options] of Object.entries(modes)) {
  const servers = [await start(repoRoot, options), await start(path.resolve(args.against), options)];
  const cost = [[], []];
  for (let r = 0; r < Number(args.rounds); r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) cost[i].push(wrk(servers[i]));
  }
  for (const s of servers) s.child.kill();
  const ratios = cost[0].map((x, r) => x / cost[1][r]);
  const show = (xs) => xs.map((x) => x.toFixed(1)).join(', ');
  console.log(`${mode}: server CPU µs per request, this checkout ${median(cost[0]).toFixed(1)} [${show(cost[0])}], ` +
    `${args.against} ${median(cost[1]).toFixed(1)} [${show(cost[1])}]; ratio (median of rounds) ${median(ratios).toFixed(3)}`);
}
fs.rmSync(lua, { force: true });
