// The remote cache (#30) on the mixed corpus, with nginx (WebDAV PUT) as the server on this machine:
//
//   npm run bench:remote -- [--corpus mixed] [--rounds 3] [--no-shards] [--no-down]
//
// "Machines" share only the server's URL: each run has a fresh copy of the corpus and a local cache
// of its own (empty unless said). Rows:
// - cold, no cache (`--no-cache`): the bound everything is compared with;
// - cold with the remote (A: empty local cache and empty server; it uploads what it encodes);
// - rebuild from a local cache (A's cache, output deleted) and remote hit (B: empty local cache,
//   the server A filled), interleaved `--rounds` times: #30's figure is remote hit ≤ 2 × rebuild + 0.5 s;
// - shards: `--shard 1/2` and `--shard 2/2` on two fresh machines and a fresh server prefix, then a
//   final run on a third (compresses nothing);
// - remote down: a fresh machine with the URL of a port nothing listens on (cold + a few seconds).

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { buildCorpus } from './corpus.js';
import { fmt, freshCopy, machineInfo, markdownTable, median, timed } from './util.js';
import { freePort, nginxDavMissing, startNginxDav } from '../helpers/cache-servers.js';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(here, 'bin/precompressor.js');
const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'mixed' },
    rounds: { type: 'string', default: '3' },
    'no-shards': { type: 'boolean', default: false },
    'no-down': { type: 'boolean', default: false },
  },
});
const rounds = Number(args.rounds);
const missing = nginxDavMissing();
if (missing) throw new Error(`bench:remote needs nginx with the dav module: ${missing}`);

const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-remote-'));
const src = path.join(tmp, 'src');
const load = (r) => (r.otherCpuS === null ? null : r.otherCpuS / (r.wallS * os.availableParallelism()));

/**
 * One run of the CLI on a fresh copy of the corpus, with a local cache folder of its own.
 * @param {string} name the machine (its folder under tmp)
 * @param {string[]} flags
 * @param {{ keepCache?: boolean }} [o] keepCache: the machine's cache as its last run left it
 */
async function run(name, flags, { keepCache = false } = {}) {
  const dir = path.join(tmp, name);
  const cacheDir = path.join(dir, 'cache');
  if (!keepCache) await fsp.rm(cacheDir, { recursive: true, force: true });
  await freshCopy(src, path.join(dir, 'dist'));
  const r = await timed(process.execPath, [BIN, path.join(dir, 'dist'), '--json', '--cache-dir', cacheDir,
    '--dictionary-store', path.join(dir, 'store'), ...flags]);
  if (r.code !== 0 && r.code !== 1) throw new Error(`${name}: exited ${r.code}: ${r.stderr}`);
  const report = JSON.parse(r.stdout);
  return { ...r, report, load: load(r) };
}

const rows = [];
/** @param {string} row @param {Awaited<ReturnType<typeof run>>} r */
const add = (row, r) => {
  const { files, cache, shard } = r.report;
  rows.push({ row, wallS: r.wallS, cpuS: r.cpuS, rssMB: r.rssMB, compressed: files.compressed,
    fromCache: files.fromCache, remote: cache.remote ?? null, share: shard?.share ?? null, load: r.load });
  console.error(`[remote] ${row}: ${fmt(r.wallS)} s wall, ${fmt(r.cpuS)} s CPU, compressed ${files.compressed}, ` +
    `from cache ${files.fromCache}${cache.remote ? `, remote ${cache.remote.hits}/${cache.remote.hits + cache.remote.misses} fetched, ` +
    `${cache.remote.uploaded} uploaded${cache.remote.down ? `, down: ${cache.remote.down}` : ''}` : ''}`);
};

let server;
try {
  await buildCorpus(args.corpus, src);
  server = await startNginxDav(path.join(tmp, 'nginx'));
  add('cold, no cache', await run('nocache', ['--no-cache']));
  add('cold, remote (A fills it)', await run('a', ['--cache-url', `${server.url}/main`]));
  const rebuild = [];
  const hit = [];
  for (let i = 0; i < rounds; i++) {
    rebuild.push(await run('a', [], { keepCache: true }));
    hit.push(await run('b', ['--cache-url', `${server.url}/main`, '--cache-url-read-only']));
  }
  const mid = (list) => list.toSorted((x, y) => x.wallS - y.wallS)[Math.floor(list.length / 2)];
  add(`rebuild from the local cache (median of ${rounds})`, mid(rebuild));
  add(`remote hit, B: empty local cache (median of ${rounds})`, mid(hit));
  const pairs = rebuild.map((r, i) => ({ rebuild: r.wallS, hit: hit[i].wallS }));
  if (!args['no-shards']) {
    add('shard 1/2 (fresh machine)', await run('s1', ['--cache-url', `${server.url}/shards`, '--shard', '1/2']));
    add('shard 2/2 (fresh machine)', await run('s2', ['--cache-url', `${server.url}/shards`, '--shard', '2/2']));
    add('after the shards (fresh machine)', await run('s3', ['--cache-url', `${server.url}/shards`]));
  }
  if (!args['no-down']) add('remote down (nothing listening)', await run('down', ['--cache-url', `http://127.0.0.1:${await freePort()}`]));

  const cold = rows[0].wallS;
  console.log(`\n## Remote cache: ${args.corpus} corpus, nginx WebDAV on this machine, Node ${process.version}, ` +
    `${machineInfo().nproc} cores, ${new Date().toISOString()}\n`);
  console.log(markdownTable(['run', 'wall s', '× cold', 'CPU s', 'peak RSS MB', 'compressed', 'from cache', 'remote fetched / uploaded', 'share of work', 'other load %'],
    rows.map((r) => [r.row, fmt(r.wallS), fmt(r.wallS / cold), fmt(r.cpuS), fmt(r.rssMB, 0), r.compressed, r.fromCache,
      r.remote ? `${r.remote.hits} / ${r.remote.uploaded}${r.remote.down ? ' (down)' : ''}` : '—',
      r.share === null ? '—' : `${fmt(100 * r.share, 1)} %`, r.load === null ? null : fmt(100 * r.load, 0)]), 'lrrrrrrrrr'));
  const m = (k) => median(pairs.map((p) => p[k]));
  console.log(`\nremote hit ÷ (2 × rebuild + 0.5 s), per round: ${pairs.map((p) => fmt(p.hit / (2 * p.rebuild + 0.5))).join(' ')}; ` +
    `medians: hit ${fmt(m('hit'))} s, rebuild ${fmt(m('rebuild'))} s, bound ${fmt(2 * m('rebuild') + 0.5)} s`);
} finally {
  await server?.close();
  await fsp.rm(tmp, { recursive: true, force: true });
}
