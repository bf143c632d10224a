// Scale benchmark: a site of many small files, built and served.
//
//   npm run bench:scale -- [--files 100000] [--unique N] [--small 568]
//                          [--servers precompressor,precompressor serve,sirv,nginx] [--no-watch] [--out f.json]
//                          [--tree <dir>]
//
// Makes its own tree: `--files` SVG icons in folders of 1,000 (`--unique` of them distinct, the
// rest repeat, so a million-file run's cold pass is cheap through the variant cache), plus a few
// pages. Then measures:
// - the CLI: cold run (empty cache), warm re-run (nothing changed), rebuild from the cache after
//   the variants and the manifest are deleted; wall time and peak RSS of each;
// - the same three on a small tree (`--small` files), where the rebuild is compared with the warm run;
// - each server: time from the call that makes the handler to the end of its first answer, RSS
//   then and after 2,000 requests for random files (nginx and `precompressor serve`: time from
//   spawn to the first answer);
// - watch mode on the big tree: time to ready (its first pass) and one changed file's batch.
// With `--tree <dir>` the big tree is kept in <dir>: made and compressed (one cold run) the first
// time, then reused as it is, and the CLI runs are skipped (for the servers' figures alone).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { npmInstallCached } from './corpus.js';
import { fmt, fmtInt, machineInfo, markdownTable, missingTools, timed } from './util.js';
import { makeTree, removeOutputs } from './scale-tree.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  allowNegative: true,
  options: {
    files: { type: 'string', default: '100000' },
    unique: { type: 'string' },
    small: { type: 'string', default: '568' },
    servers: { type: 'string', default: 'precompressor,precompressor serve,sirv,nginx' },
    watch: { type: 'boolean', default: true },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    tree: { type: 'string' },
  },
});
const count = (name, v) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected --${name} to be a positive integer, got ${JSON.stringify(v)}`);
  return n;
};
const files = count('files', args.files);
const unique = count('unique', args.unique ?? args.files);
const small = count('small', args.small);
const servers = args.servers.split(',').filter(Boolean);
const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-scale-'));
const cli = path.join(repoRoot, 'bin/precompressor.js');
const NGINX_BROTLI = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';

/** Make both trees and measure the CLI on them; returns the big tree's sample of URL paths. */
async function cliTrees(big) {
  const smallDir = path.join(tmp, 'small');
  console.error(`making ${fmtInt(files)} files (${fmtInt(unique)} distinct) in ${big}`);
  const sample = await makeTree(big, files, unique);
  await makeTree(smallDir, small, small);
  results.cli.push(...await cliRuns(smallDir, `${small} files`));
  results.cli.push(...await cliRuns(big, `${files} files`));
  return sample;
}

/** `--tree`: the big tree made and compressed once, then reused; returns a sample of its URL paths. */
async function keptTree(big) {
  const sampleFile = `${big}.sample.txt`;
  if (!fs.existsSync(sampleFile)) {
    console.error(`making ${fmtInt(files)} files (${fmtInt(unique)} distinct) in ${big}, then one cold run`);
    const sample = await makeTree(big, files, unique);
    const r = await timed(process.execPath, [cli, big, '--quiet', '--cache-dir', path.join(tmp, 'cache')], { timeoutMs: 3 * 3600e3 });
    if (r.code !== 0) throw new Error(`the cold run exited ${r.code}: ${r.stderr}`);
    await fsp.writeFile(sampleFile, sample.join('\n'));
  }
  return (await fsp.readFile(sampleFile, 'utf8')).split('\n');
}

/** The CLI's cold, warm and rebuild-from-cache runs on `dir`. */
async function cliRuns(dir, label) {
  const cacheDir = path.join(tmp, `cache-${label}`);
  const run = () => timed(process.execPath, [cli, dir, '--quiet', '--cache-dir', cacheDir], { timeoutMs: 3 * 3600e3 });
  const rows = [];
  const row = (what, r) => {
    if (r.code !== 0) console.error(`[${label}] ${what} exited ${r.code}: ${r.stderr}`);
    rows.push({ tree: label, run: what, wallS: r.wallS, rssMB: r.rssMB, cpuS: r.cpuS, otherCpuS: r.otherCpuS, code: r.code });
    console.error(`[${label}] ${what}: ${fmt(r.wallS)} s, ${fmt(r.rssMB, 0)} MB`);
  };
  row('cold', await run());
  row('warm', await run());
  await removeOutputs(dir);
  row('rebuild from cache', await run());
  row('warm', await run());
  return rows;
}

/** One Node server's start-up figures from test/bench/scale-server.js. */
async function nodeServer(kind, dir, probesFile) {
  const modules = kind === 'sirv' ? await npmInstallCached('scale-sirv', ['sirv@3.0.2']) : '';
  const child = spawn(process.execPath, [path.join(repoRoot, 'test/bench/scale-server.js'), kind, dir, modules, repoRoot, probesFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${kind} server exited ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** `precompressor serve <dir> --port 0` as a user starts it: time from spawn to the first 200, its RSS then. */
async function previewServer(dir, probe) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', dir, '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const port = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('close', (code) => reject(new Error(`precompressor serve exited ${code}: ${out}`)));
  });
  const r = await new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: probe, headers: { 'accept-encoding': 'br' } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); })
      .on('error', () => resolve(0));
  });
  const firstMs = performance.now() - t0;
  const rssMB = await fsp.readFile(`/proc/${child.pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1]) / 1024).catch(() => null);
  const firstCpuMs = await cpuMsOf(child.pid);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.on('close', resolve));
  return { firstMs, firstCpuMs, rssFirstMB: rssMB, rssAfterMB: null, bad: r === 200 ? 0 : 1 };
}

/** CPU time (user + sys) of process `pid` so far, in ms (/proc; null elsewhere). */
async function cpuMsOf(pid) {
  const stat = await fsp.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const f = stat.replace(/^.*\) /, '').split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // utime + stime in USER_HZ (100 per second)
}

/** Watch mode on the compressed tree: ready (first pass) and one changed file's batch (test/bench/scale-watch.js). */
async function watchRun(dir, file) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'test/bench/scale-watch.js'), dir, repoRoot, path.join(tmp, 'cache-watch'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`watch exited ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** nginx with brotli_static: time from spawn to the first 200, RSS of its worker. */
async function nginxServer(dir, probe) {
  const missing = missingTools(['nginx', NGINX_BROTLI]);
  if (missing.length) throw new Error(`missing ${missing.join(', ')}`);
  const prefix = path.join(tmp, 'nginx');
  await fsp.mkdir(path.join(prefix, 'logs'), { recursive: true });
  const port = 20000 + Math.floor(Math.random() * 20000);
  fs.writeFileSync(path.join(prefix, 'nginx.conf'), `load_module ${NGINX_BROTLI};
daemon off; worker_processes 1; user root; pid ${prefix}/nginx.pid; error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http { access_log off; include /etc/nginx/mime.types; gzip_static on; brotli_static on;
  server { listen 127.0.0.1:${port}; root ${dir}; } }
`);
  const t0 = performance.now();
  const child = spawn('nginx', ['-p', prefix, '-e', path.join(prefix, 'logs/error.log'), '-c', path.join(prefix, 'nginx.conf')], { stdio: 'ignore' });
  let status = 0;
  while (status !== 200) {
    status = await new Promise((resolve) => {
      http.get({ host: '127.0.0.1', port, path: probe, headers: { 'accept-encoding': 'br' } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); })
        .on('error', () => setTimeout(() => resolve(0), 5));
    });
  }
  const firstMs = performance.now() - t0;
  const rssMB = (await fsp.readFile('/proc/' + child.pid + '/status', 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1]) / 1024).catch(() => null));
  child.kill('SIGQUIT');
  await new Promise((resolve) => child.on('close', resolve));
  return { firstMs, rssFirstMB: rssMB, rssAfterMB: null, bad: 0 };
}

const results = { machine: machineInfo(), files, unique, small, cli: [], servers: [] };
try {
  const big = args.tree === undefined ? path.join(tmp, 'big') : path.resolve(args.tree);
  const sample = args.tree === undefined ? await cliTrees(big) : await keptTree(big);
  const probesFile = path.join(tmp, 'probes.txt');
  await fsp.writeFile(probesFile, sample.join('\n'));
  for (const s of servers) {
    try {
      const r = s === 'nginx' ? await nginxServer(big, sample[0]) : s === 'precompressor serve' ? await previewServer(big, sample[0]) : await nodeServer(s, big, probesFile);
      results.servers.push({ server: s, ...r });
      console.error(`[serve] ${s}: first answer ${fmt(r.firstMs, 0)} ms, RSS ${fmt(r.rssFirstMB, 0)} MB`);
    } catch (err) {
      results.servers.push({ server: s, error: String(err.message ?? err) });
      console.error(`[serve] ${s}: ${err.message ?? err}`);
    }
  }
  if (args.watch) {
    try {
      results.watch = await watchRun(big, path.join(big, 'index.html'));
      console.error(`[watch] ready ${fmt(results.watch.readyMs, 0)} ms, RSS ${fmt(results.watch.rssReadyMB, 0)} MB; one file's batch ${fmt(results.watch.batchMs, 0)} ms`);
    } catch (err) {
      results.watch = { error: String(err.message ?? err) };
    }
  }
} finally {
  if (!args.keep) await fsp.rm(tmp, { recursive: true, force: true });
}

const warmOf = (tree) => results.cli.find((r) => r.tree === tree && r.run === 'warm');
console.log(`\n## Scale: ${fmtInt(files)} files (${fmtInt(unique)} distinct), Node ${process.version}, ${results.machine.nproc} cores\n`);
console.log(markdownTable(['tree', 'run', 'wall s', '× warm', 'peak RSS MB', 'CPU s', 'other load %'], results.cli.map((r) => [
  r.tree, r.run, fmt(r.wallS), fmt(r.wallS / warmOf(r.tree).wallS), fmt(r.rssMB, 0), fmt(r.cpuS, 1),
  r.otherCpuS === null ? null : fmt((100 * r.otherCpuS) / (r.wallS * results.machine.nproc), 0),
]), 'llrrrrr'));
console.log();
const serverRow = (r) => [
  r.server, r.error ? `error: ${r.error}` : fmt(r.firstMs, 0), fmt(r.firstCpuMs, 0), fmt(r.rssFirstMB, 0), fmt(r.rssAfterMB, 0), r.bad ?? null,
];
const serverHead = ['server', 'first answer ms', 'CPU ms until then', 'RSS at first answer MB', 'RSS after 2,000 requests MB', 'non-200'];
console.log(markdownTable(serverHead, results.servers.map(serverRow), 'lrrrrr'));
if (results.watch) {
  const w = results.watch;
  console.log();
  const head = ['watch mode', 'ready ms (first pass)', 'RSS at ready MB', 'one changed file: batch ms',
    'peak RSS in the batch MB', 'peak RSS MB', 'whole pass process: peak RSS MB'];
  const row = w.error ? [`error: ${w.error}`, null, null, null, null, null, null]
    : ['precompressor watch', fmt(w.readyMs, 0), fmt(w.rssReadyMB, 0), fmt(w.batchMs, 0), fmt(w.peakBatchMB, 0),
      fmt(w.peakMB, 0), fmt(w.childPeakMB, 0)];
  console.log(markdownTable(head, [row], 'lrrrrrr'));
}
if (args.out) await fsp.writeFile(args.out, JSON.stringify(results, null, 2));
