// Serving benchmark: requests/s and p99 latency of static servers sending precompressed files.
//
//   npm run bench:serve -- [--duration 10] [--connections 32] [--warmup 2] [--only icons|mixed] [--out r.json]
//                          [--servers a,b] [--max-wait S] [--against <checkout>,<checkout>] [--rounds N]
//
// Each corpus is compressed once with bin/precompressor.js (so every server sees the same .br/.gz
// files next to the originals, plus our manifest). Each server runs in its own child process on
// 127.0.0.1; wrk (one thread) cycles through every URL of the corpus with `Accept-Encoding: br, gzip`.
// Before the load, one probe request per server checks the status, the encoding served and that
// the body decodes to the original bytes. The `node-http-ceiling` row is not a usable server but
// the upper bound of anything on node:http (fixed in-memory responses, one Map lookup per
// request); the table gives every node:http server's req/s as a share of it. `--against` adds our
// serveStatic of other checkouts (a git worktree each, with node_modules), and `--rounds` runs every
// server that many times, round after round (every other round in reverse order), so that servers
// are compared interleaved. Each server is warmed up for `--warmup` s and until every URL was asked
// for three times; `CPU µs/req` is the server's CPU time (all its threads) per request.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { buildCorpus, listFiles, npmInstallCached } from './corpus.js';
import { APT_HINT, fmt, fmtInt, machineBusyS, machineInfo, markdownTable, missingTools, timed, waitForQuiet } from './util.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    servers: { type: 'string' },
    'max-wait': { type: 'string', default: '120' }, // seconds to wait for a quiet machine before each server
    out: { type: 'string' },
    against: { type: 'string' },
    rounds: { type: 'string', default: '1' },
  },
});
const rounds = Number(args.rounds);
const duration = Number(args.duration);
const connections = Number(args.connections);
const warmup = Number(args.warmup);
for (const [n, v] of [['--duration', duration], ['--connections', connections]]) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`Expected ${n} to be a positive integer, got ${JSON.stringify(String(v))}`);
}
const kinds = args.only ? args.only.split(',') : ['icons', 'mixed'];
const NGINX_BROTLI = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';

/**
 * The servers, in order; `peers` are installed from npm into the bench cache at run time. `label`
 * (default: name) is what the table shows; `ceiling` marks the node:http upper bound, and
 * `nodeHttp: false` a server whose req/s is not compared with it.
 */
const SERVERS = [
  { name: 'sirv', peers: ['sirv@3.0.2'], note: 'sirv 3.0.2, `{ dev: false, brotli: true, gzip: true }` on node:http' },
  { name: 'precompressor', peers: [], note: 'our `serveStatic(root)` (defaults) on node:http' },
  { name: 'precompressor-serve', peers: [], note: '`precompressor serve` (startPreview(): serveStatic behind its connection limits and stall watch)' },
  {
    name: 'node-http-ceiling', label: 'node:http, fixed responses (ceiling)', peers: [], ceiling: true,
    note: 'not a usable server: the upper bound of any middleware on node:http. At startup it reads every file ' +
      '(its `.br` when there is one) into a Map from URL path to a precomputed header array (the headers ours sends: ' +
      'Content-Type, Content-Length, Content-Encoding, Accept-Ranges, Last-Modified, Vary, ETag, Cache-Control) and the body; ' +
      'each request is one lookup on `req.url` and `res.writeHead(200, head); res.end(body)`. No negotiation (br to every ' +
      'client), no path decoding or security checks, no conditional or Range requests, no freshness checks, everything in memory',
  },
  { name: 'express-static-gzip', peers: ['express-static-gzip@3.0.2', 'express@5.3.0'], note: 'express-static-gzip 3.0.2 `{ enableBrotli: true, orderPreference: ["br"] }` on express 5.3.0' },
  { name: 'fastify-static', peers: ['@fastify/static@10.1.11', 'fastify@5.12.8'], note: '@fastify/static 10.1.11 `{ preCompressed: true }` on fastify 5.12.8' },
  { name: 'precompressor-fastify', peers: ['fastify@5.12.8'], note: 'our `precompressor/fastify` plugin `{ root }` (defaults) on fastify 5.12.8' },
  { name: 'precompressor-hono', peers: ['hono@4.13.19', '@hono/node-server@2.1.9'], note: 'our `precompressor/fetch` handler in Hono 4.13.19 on @hono/node-server 2.1.9' },
  { name: 'express-compression', peers: ['compression@1.8.2', 'express@5.3.0'], note: '`express.static` + `compression()` 1.8.2 (compresses per request, its defaults) on express 5.3.0' },
  { name: 'nginx', peers: [], nodeHttp: false, note: 'Debian nginx-light, `gzip_static on; brotli_static on;` (libnginx-mod-http-brotli-static), 1 worker, sendfile on' },
].filter((s) => !args.servers || args.servers.split(',').includes(s.name));
for (const dir of (args.against ?? '').split(',').filter(Boolean)) {
  const repo = path.resolve(dir);
  const commit = (await timed('git', ['-C', repo, 'log', '-1', '--format=%h %s'])).stdout.trim();
  SERVERS.push({ name: `precompressor@${path.basename(repo)}`, kind: 'precompressor', repo, peers: [], note: `our \`serveStatic(root)\` of ${repo} (${commit})` });
}
const serverOf = (name) => SERVERS.find((s) => s.name === name);
const labelOf = (name) => serverOf(name).label ?? name;
const pctOfCeiling = (r) => (typeof r.ofCeiling === 'number' ? fmt(100 * r.ofCeiling, 0) : null);

const missing = missingTools(['wrk', 'nginx', NGINX_BROTLI, 'brotli']);
if (missing.includes('wrk')) {
  console.error(`wrk is not installed; install it with:\n  ${APT_HINT}`);
  process.exit(1);
}
if (missing.length) console.error(`Missing: ${missing.join(', ')}. Install with:\n  ${APT_HINT}\nRows that need them report an error.`);

const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-bench-serve-'));
const luaFile = path.join(tmp, 'cycle.lua');
fs.writeFileSync(luaFile, `
local paths = {}
for line in io.lines(os.getenv("BENCH_URLS")) do paths[#paths + 1] = line end
local i = 0
local headers = { ["Accept-Encoding"] = "br, gzip" }
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i], headers)
end
done = function(s, latency, requests)
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    s.requests, s.duration, s.bytes, latency:percentile(50), latency:percentile(99), latency.mean, latency.max,
    s.errors.connect, s.errors.read, s.errors.write, s.errors.status, s.errors.timeout))
end
`);

const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }).on('error', reject);
});

/** Peak RSS (VmHWM) in MB of a process and its direct children, the largest one. */
function peakRssMB(pid) {
  const hwm = (p) => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  try {
    const kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return Math.max(hwm(pid), ...kids.map(hwm));
  } catch { return null; }
}

/** CPU seconds (user + sys) of a process and its direct children so far. */
function treeCpuS(pid) {
  const cpu = (p) => {
    const f = fs.readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in USER_HZ
  };
  try {
    const kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return cpu(pid) + kids.reduce((n, k) => n + cpu(k), 0);
  } catch { return null; }
}

/** Start one server as a child; resolves { child, port } once it listens. */
async function startServer(server, root) {
  let child;
  let port;
  if (server.name === 'nginx') {
    if (missing.includes('nginx') || missing.includes(NGINX_BROTLI)) throw new Error(`nginx or its brotli_static module is missing (${APT_HINT})`);
    port = await freePort();
    const prefix = path.join(tmp, 'nginx');
    await fsp.mkdir(path.join(prefix, 'logs'), { recursive: true });
    fs.writeFileSync(path.join(prefix, 'nginx.conf'), `load_module ${NGINX_BROTLI};
daemon off; worker_processes 1; user root; pid ${prefix}/nginx.pid; error_log ${prefix}/logs/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types; default_type application/octet-stream;
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000; keepalive_timeout 60s;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy; fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  server { listen 127.0.0.1:${port}; root ${root}; gzip_static on; brotli_static on; }
}
`);
    child = spawn('nginx', ['-p', prefix, '-e', path.join(prefix, 'logs/error.log'), '-c', path.join(prefix, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  } else {
    const modules = server.peers.length ? await npmInstallCached(`serve-${server.name}`, server.peers) : '';
    const argv = [path.join(here, 'serve-server.js'), server.kind ?? server.name, root, modules, server.repo ?? repoRoot];
    child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  }
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = server.name === 'nginx'
    ? waitForPort(port).then(() => port)
    : new Promise((resolve) => {
      let out = '';
      child.stdout.on('data', (d) => { out += d; const m = /\{"port":(\d+)\}/.exec(out); if (m) resolve(Number(m[1])); });
    });
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
  const first = await Promise.race([ready, exited.then((code) => ({ code })), timeout]);
  if (typeof first !== 'number') {
    child.kill('SIGKILL');
    throw new Error(`server did not start (${first === 'timeout' ? 'timeout' : `exit ${first.code}`}): ${(stderr.match(/^\w*Error.*$/m)?.[0] ?? stderr.trim().split('\n').slice(-3).join(' '))}`);
  }
  return { child, port: first, exited };
}

async function waitForPort(port) {
  for (let i = 0; i < 300; i++) {
    const ok = await new Promise((resolve) => net.connect(port, '127.0.0.1').on('connect', function () { this.destroy(); resolve(true); }).on('error', () => resolve(false)));
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** GET `url` with Accept-Encoding br, gzip; check it decodes to `original`. */
function probe(port, url, original) {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: url, headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const enc = res.headers['content-encoding'] ?? 'identity';
        let body = Buffer.concat(chunks);
        try {
          if (enc === 'br') body = zlib.brotliDecompressSync(body);
          else if (enc === 'gzip') body = zlib.gunzipSync(body);
        } catch { /* reported as a mismatch */ }
        resolve({ status: res.statusCode, encoding: enc, vary: res.headers.vary ?? null, ok: res.statusCode === 200 && body.equals(original) });
      });
    }).on('error', (e) => resolve({ status: null, encoding: null, ok: false, error: e.message }));
  });
}

async function runWrk(port, urlsFile, seconds) {
  const r = await timed('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', luaFile, `http://127.0.0.1:${port}`],
    { env: { ...process.env, BENCH_URLS: urlsFile } });
  const m = /WRKJSON (\{.*\})/.exec(r.stdout);
  if (!m) throw new Error(`wrk failed (${r.code}): ${r.stderr || r.stdout.slice(-300)}`);
  return { ...JSON.parse(m[1]), cpuS: r.cpuS };
}

/**
 * Warm a server up: `--warmup` seconds, and more 1 s slices until every URL was asked for at least
 * WARM_PASSES times (at most 30 s): a server that checks a path on its first request and reads its
 * body into memory on the next (ours) is measured hot, as the ceiling starts.
 */
const WARM_PASSES = 3;
async function warmUp(port, urlsFile, count) {
  let requests = 0;
  let seconds = 0;
  if (warmup > 0) {
    requests += (await runWrk(port, urlsFile, warmup)).requests;
    seconds += warmup;
  }
  while (requests < WARM_PASSES * count && seconds < 30) {
    requests += (await runWrk(port, urlsFile, 1)).requests;
    seconds += 1;
  }
}

const results = { machine: machineInfo(), date: new Date().toISOString(), duration, connections, warmup, corpora: {}, rows: [] };
console.error(`machine: ${results.machine.nproc} cores (${results.machine.cpu}), Node ${results.machine.node}; wrk -t1 -c${connections} -d${duration}s`);
try {
  for (const kind of kinds) {
    const root = path.join(tmp, `site-${kind}`);
    console.error(`\n[${kind}] building and compressing the corpus…`);
    const corpus = await buildCorpus(kind, root);
    const originals = await listFiles(root);
    const pc = await timed(process.execPath, [path.join(repoRoot, 'bin/precompressor.js'), root, '--quiet']);
    if (pc.code !== 0) {
      console.error(`[${kind}] precompressor failed (${pc.stderr.slice(-300)}); making the variants with the brotli/gzip CLIs instead`);
      await timed('sh', ['-c', `find . -type f -size +0 -print0 | xargs -0 -P${os.availableParallelism()} -n 8 sh -c 'brotli -q 11 -f -- "$@" && gzip -9 -k -f -- "$@"' _`], { cwd: root });
    }
    const urls = originals.map((f) => '/' + f.rel.split('/').map(encodeURIComponent).join('/'));
    const urlsFile = path.join(tmp, `urls-${kind}.txt`);
    fs.writeFileSync(urlsFile, urls.join('\n') + '\n');
    const sample = originals.filter((f) => /\.(svg|js|css|json)$/.test(f.rel)).sort((a, b) => b.size - a.size)[0] ?? originals[0];
    const sampleUrl = '/' + sample.rel.split('/').map(encodeURIComponent).join('/');
    const sampleBytes = fs.readFileSync(sample.abs);
    results.corpora[kind] = { files: corpus.files, bytes: corpus.bytes, urls: urls.length, probe: sample.rel };

    // every other round in reverse order: a drift of the machine's load weighs on every server alike
    const order = (k) => (k % 2 === 0 ? SERVERS : [...SERVERS].reverse()).map((s) => [k + 1, s]);
    for (const [round, server] of Array.from({ length: rounds }, (_, k) => order(k)).flat()) {
      const row = { server: server.name, corpus: kind, round, note: server.note };
      let started = null;
      try {
        const q = await waitForQuiet({ maxWaitS: Number(args['max-wait']) });
        if (!q.quiet && Number(args['max-wait']) > 0) console.error(`(machine still busy after ${fmt(q.waitedS, 0)} s; measuring ${server.name} anyway)`);
        started = await startServer(server, root);
        row.probe = await probe(started.port, sampleUrl, sampleBytes);
        await warmUp(started.port, urlsFile, urls.length);
        const busy0 = machineBusyS();
        const server0 = treeCpuS(started.child.pid);
        const w = await runWrk(started.port, urlsFile, duration);
        const serverCpuS = treeCpuS(started.child.pid) - server0;
        const other = busy0 === null || w.cpuS === null || server0 === null ? null : Math.max(0, machineBusyS() - busy0 - w.cpuS - serverCpuS);
        Object.assign(row, {
          serverCpuS, cpuUsPerReq: serverCpuS === null ? null : (serverCpuS * 1e6) / w.requests, otherLoad: other === null ? null : (100 * other) / ((w.duration_us / 1e6) * os.availableParallelism()),
          rps: w.requests / (w.duration_us / 1e6), p50ms: w.p50_us / 1000, p99ms: w.p99_us / 1000,
          mbps: w.bytes / (w.duration_us / 1e6) / 1e6, errors: w.connect + w.read + w.write + w.timeout, non2xx: w.status,
          rssMB: peakRssMB(started.child.pid), wrk: w,
        });
        console.error(`[${kind}] ${rounds > 1 ? `round ${round} ` : ''}${server.name}: ${fmt(row.rps, 0)} req/s, p99 ${fmt(row.p99ms)} ms, probe ${row.probe.encoding} ${row.probe.ok ? 'ok' : 'MISMATCH'}`);
      } catch (e) {
        row.error = e.message;
        console.error(`[${kind}] ${server.name}: ERROR ${e.message}`);
      } finally {
        if (started) {
          started.child.kill(server.name === 'nginx' ? 'SIGQUIT' : 'SIGTERM');
          await Promise.race([started.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
          if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
        }
      }
      results.rows.push(row);
    }
    for (const r of results.rows.filter((x) => x.corpus === kind)) {
      const sirv = results.rows.find((x) => x.corpus === kind && x.round === r.round && x.server === 'sirv' && x.rps);
      const ceiling = results.rows.find((x) => x.corpus === kind && x.round === r.round && serverOf(x.server).ceiling && x.rps);
      r.vsSirv = sirv && r.rps ? r.rps / sirv.rps : null;
      r.ofCeiling = ceiling && r.rps && serverOf(r.server).nodeHttp !== false ? r.rps / ceiling.rps : null;
    }
    const ours = results.rows.find((r) => r.corpus === kind && r.server === 'precompressor' && r.rps);
    if (ours) console.error(`[${kind}] precompressor: ${fmt(ours.vsSirv) ?? '—'} × sirv, ${pctOfCeiling(ours) ?? '—'} % of the node:http ceiling`);
  }
} finally {
  await fsp.rm(tmp, { recursive: true, force: true });
}

const table = markdownTable([...(rounds > 1 ? ['round'] : []), 'server', 'corpus', 'req/s', 'p99 ms', '× sirv', '% of ceiling', 'MB/s', 'non-2xx', 'errors', 'encoding served (probe)', 'peak RSS MB', 'server CPU s', 'CPU µs/req', 'other load %'],
  results.rows.map((r) => [...(rounds > 1 ? [r.round] : []), ...(r.error
    ? [labelOf(r.server), r.corpus, null, null, null, null, null, null, null, null, `error: ${r.error.slice(0, 160)}`, null, null, null]
    : [labelOf(r.server), r.corpus, fmtInt(r.rps), fmt(r.p99ms), fmt(r.vsSirv), pctOfCeiling(r), fmt(r.mbps, 1), r.non2xx, r.errors,
      `${r.probe.encoding}${r.probe.ok ? '' : ' (MISMATCH)'}`, fmt(r.rssMB, 0), fmt(r.serverCpuS, 1), fmt(r.cpuUsPerReq, 1), fmt(r.otherLoad, 0)])]), `${rounds > 1 ? 'r' : ''}llrrrrrrrlrrrr`);
/**
 * With rounds: each server's median req/s per corpus, as a share of our serveStatic's, and the
 * median of its per-round shares of the ceiling (each taken in the same round: the machine is shared).
 */
function medians() {
  const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] : null);
  const rows = [];
  for (const kind of Object.keys(results.corpora)) {
    const mine = (name) => results.rows.filter((r) => r.corpus === kind && r.server === name && r.rps);
    const of = (name) => median(mine(name).map((r) => r.rps));
    const ours = of('precompressor');
    for (const s of SERVERS) {
      const ceiling = median(mine(s.name).filter((r) => typeof r.ofCeiling === 'number').map((r) => r.ofCeiling));
      const cpu = median(mine(s.name).map((r) => r.cpuUsPerReq).filter((x) => typeof x === 'number'));
      rows.push([labelOf(s.name), kind, fmtInt(of(s.name)), ours ? fmt(of(s.name) / ours, 3) : null, ceiling === null ? null : fmt(ceiling, 3), fmt(cpu, 1)]);
    }
  }
  return `Median of ${rounds} rounds:\n\n${markdownTable(['server', 'corpus', 'req/s', '× precompressor', '× ceiling (median of rounds)', 'CPU µs/req'], rows, 'llrrrr')}`;
}
const loaded = results.rows.filter((r) => r.otherLoad > 5);
const warning = loaded.length
  ? `\n\n**Warning:** other processes used more than 5% of the machine during: ${loaded.map((r) => `${labelOf(r.server)} (${r.corpus}, ${fmt(r.otherLoad, 0)}%)`).join(', ')}; those figures are not reliable.`
  : '';
const corpora = Object.entries(results.corpora).map(([k, c]) => `- ${k}: ${c.files} files, ${fmt(c.bytes / 1e6, 1)} MB; probe file \`${c.probe}\``).join('\n');
const notes = SERVERS.map((s) => `- **${s.label ?? s.name}**: ${s.note}`).join('\n');
console.log(`${corpora}\n\n${table}${warning}${rounds > 1 ? `\n\n${medians()}` : ''}\n\n${notes}
- **% of ceiling**: req/s as a share of the node:http ceiling row on the same corpus, for the servers that run on node:http (not nginx)
- **CPU µs/req**: the server's CPU time (user + system, all its threads) per request answered
- **other load %**: CPU time used by processes other than wrk and the server during the run, as a share of all cores (from /proc)`);
if (args.out) {
  fs.writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
  console.error(`results written to ${args.out}`);
}
