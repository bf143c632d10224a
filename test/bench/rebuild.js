// Rebuild from the variant cache against a cold run and a warm re-run of the same corpus (#20,
// #31: a rebuild at most 10 % of a cold run on every corpus), in interleaved rounds, and the same
// rounds run by another checkout when given:
//
//   npm run bench:rebuild -- [--corpus tree,icons,small,mixed] [--files 568] [--rounds 3] [--against <checkout>]
//
// Corpora: `tree`, `--files` SVG icons made by test/bench/scale-tree.js; the others by
// test/bench/corpus.js. Each round, each corpus and each checkout: cold (the variants and the
// manifest deleted, an empty cache), then rebuild (the variants and the manifest deleted, as a
// bundler empties its output; every variant from the cache), then a warm re-run; every checkout
// works on the same tree, each with its own cache. The trees are made under os.tmpdir() (TMPDIR):
// a tmpfs there leaves out the file system's own costs. On Linux with autogroups, `nice` alone
// does not put the runs ahead of other sessions' load; a session of its own whose autogroup has
// the priority does (the header shows which the runs had):
//
//   setsid sh -c 'echo -20 > /proc/self/autogroup && exec nice -n -20 npm run bench:rebuild -- --rounds 3'

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { fmt, machineInfo, markdownTable, median, schedulingInfo, timed } from './util.js';
import { makeTree, removeOutputs } from './scale-tree.js';
import { buildCorpus, CORPUS_KINDS } from './corpus.js';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string', default: ['tree', ...CORPUS_KINDS].join(',') },
    files: { type: 'string', default: '568' },
    rounds: { type: 'string', default: '3' },
    against: { type: 'string' },
  },
});
const files = Number(args.files);
const rounds = Number(args.rounds);
for (const [name, n] of [['files', files], ['rounds', rounds]]) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected --${name} to be a positive integer, got ${JSON.stringify(args[name])}`);
}
const corpora = args.corpus.split(',').filter(Boolean);
for (const c of corpora) {
  if (c !== 'tree' && !CORPUS_KINDS.includes(c)) throw new Error(`Unknown --corpus ${JSON.stringify(c)}: tree, ${CORPUS_KINDS.join(', ')}`);
}
const checkouts = [here, ...(args.against ? [path.resolve(args.against)] : [])];
const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-rebuild-'));

const row = (r) => ({ wallS: r.wallS, cpuS: r.cpuS, load: r.otherCpuS === null ? null : r.otherCpuS / (r.wallS * os.availableParallelism()) });

/** One checkout's runs on one corpus. */
function subject(checkout, k, corpus, dir) {
  const cacheDir = path.join(tmp, `cache-${corpus}-${k}`);
  const run = async (what) => {
    const r = await timed(process.execPath, [path.join(checkout, 'bin/precompressor.js'), dir, '--quiet', '--cache-dir', cacheDir]);
    if (r.code !== 0) throw new Error(`${checkout}: ${what} on ${corpus} exited ${r.code}: ${r.stderr}`);
    return row(r);
  };
  return { checkout, corpus, cacheDir, run, cold: [], rebuild: [], warm: [] };
}

/** One round of a subject: cold with an empty cache, rebuild from it, warm. */
async function round(s, dir) {
  await removeOutputs(dir);
  await fsp.rm(s.cacheDir, { recursive: true, force: true });
  s.cold.push(await s.run('cold'));
  await removeOutputs(dir);
  s.rebuild.push(await s.run('rebuild'));
  s.warm.push(await s.run('warm'));
}

const results = [];
try {
  for (const corpus of corpora) {
    // One tree for all: on some file systems the cost of creating a file depends on where (ext4
    // without a journal skips the inodes freed in the last minutes one by one), so all run there.
    const dir = path.join(tmp, corpus);
    if (corpus === 'tree') await makeTree(dir, files, files);
    else await buildCorpus(/** @type {'mixed' | 'small' | 'icons'} */ (corpus), dir);
    const subjects = checkouts.map((c, k) => subject(c, k, corpus, dir));
    for (let i = 0; i < rounds; i++) {
      for (const s of i % 2 === 0 ? subjects : [...subjects].reverse()) await round(s, dir);
    }
    results.push(...subjects);
    await fsp.rm(dir, { recursive: true, force: true });
  }
} finally {
  await fsp.rm(tmp, { recursive: true, force: true });
}

const m = (xs, k) => median(xs.map((x) => x[k]));
const pct = (a, b) => `${fmt(100 * a / b, 1)} %`;
console.log(`\n## Rebuild from the cache: ${rounds} rounds (medians), Node ${process.version}, ${machineInfo().nproc} cores, tmpdir ${os.tmpdir()}, ${schedulingInfo()}\n`);
console.log(markdownTable(
  ['corpus', 'checkout', 'cold wall s', 'rebuild wall s', 'warm wall s', 'rebuild / cold wall', 'cold CPU s', 'rebuild CPU s',
    'rebuild / cold CPU', 'rebuild / cold wall per round', 'other load %'],
  results.map((s) => [
    s.corpus === 'tree' ? `tree (${files} icons)` : s.corpus, s.checkout,
    fmt(m(s.cold, 'wallS')), fmt(m(s.rebuild, 'wallS')), fmt(m(s.warm, 'wallS')), pct(m(s.rebuild, 'wallS'), m(s.cold, 'wallS')),
    fmt(m(s.cold, 'cpuS')), fmt(m(s.rebuild, 'cpuS')), pct(m(s.rebuild, 'cpuS'), m(s.cold, 'cpuS')),
    s.rebuild.map((r, i) => pct(r.wallS, s.cold[i].wallS)).join(' '),
    fmt(100 * m([...s.cold, ...s.rebuild, ...s.warm], 'load'), 0),
  ]),
  'llrrrrrrrlr',
));
