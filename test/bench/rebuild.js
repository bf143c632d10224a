// Rebuild from the variant cache against a warm re-run of the same tree (#20), in interleaved
// rounds, and the same rounds run by another checkout when given:
//
//   npm run bench:rebuild -- [--files 568] [--rounds 5] [--against <checkout>]
//
// Each round and each checkout: delete the variants and the manifest (as a bundler empties its
// output), time the rebuild (every variant from the cache), then time a warm re-run; every
// checkout works on the same tree, each with its own cache. The tree is made under os.tmpdir()
// (TMPDIR): a tmpfs there leaves out the file system's own costs. On Linux with autogroups, `nice`
// alone does not put the runs ahead of other sessions' load; a session of its own whose autogroup
// has the priority does (the header shows which the runs had):
//
//   setsid sh -c 'echo -20 > /proc/self/autogroup && exec nice -n -20 npm run bench:rebuild -- --rounds 7'

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { fmt, machineInfo, markdownTable, median, schedulingInfo, timed } from './util.js';
import { makeTree, removeOutputs } from './scale-tree.js';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: {
    files: { type: 'string', default: '568' },
    rounds: { type: 'string', default: '5' },
    against: { type: 'string' },
  },
});
const files = Number(args.files);
const rounds = Number(args.rounds);
for (const [name, n] of [['files', files], ['rounds', rounds]]) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`Expected --${name} to be a positive integer, got ${JSON.stringify(args[name])}`);
}
const checkouts = [here, ...(args.against ? [path.resolve(args.against)] : [])];
const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-rebuild-'));

/** A checkout's cache, filled by a cold run on `dir`, and its run. */
async function setUp(checkout, k, dir) {
  const cacheDir = path.join(tmp, `cache-${k}`);
  await removeOutputs(dir);
  const run = () => timed(process.execPath, [path.join(checkout, 'bin/precompressor.js'), dir, '--quiet', '--cache-dir', cacheDir]);
  const cold = await run();
  if (cold.code !== 0) throw new Error(`${checkout}: cold run exited ${cold.code}: ${cold.stderr}`);
  return { checkout, run, rebuild: [], warm: [] };
}

const row = (r) => ({ wallS: r.wallS, cpuS: r.cpuS, load: r.otherCpuS === null ? null : r.otherCpuS / (r.wallS * os.availableParallelism()) });
const results = [];
try {
  // One tree for all: on some file systems the cost of creating a file depends on where (ext4
  // without a journal skips the inodes freed in the last minutes one by one), so all run there.
  const dir = path.join(tmp, 'tree');
  await makeTree(dir, files, files);
  const subjects = [];
  for (const [k, c] of checkouts.entries()) subjects.push(await setUp(c, k, dir));
  for (let i = 0; i < rounds; i++) {
    for (const s of i % 2 === 0 ? subjects : [...subjects].reverse()) {
      await removeOutputs(dir);
      s.rebuild.push(row(await s.run()));
      s.warm.push(row(await s.run()));
    }
  }
  results.push(...subjects);
} finally {
  await fsp.rm(tmp, { recursive: true, force: true });
}

const m = (xs, k) => median(xs.map((x) => x[k]));
console.log(`\n## Rebuild from the cache: ${files} files, ${rounds} rounds, Node ${process.version}, ${machineInfo().nproc} cores, tmpdir ${os.tmpdir()}, ${schedulingInfo()}\n`);
console.log(markdownTable(
  ['checkout', 'rebuild wall s', 'warm wall s', 'wall ×', 'rebuild CPU s', 'warm CPU s', 'CPU ×', 'wall × per round', 'other load %'],
  results.map((s) => [
    s.checkout, fmt(m(s.rebuild, 'wallS')), fmt(m(s.warm, 'wallS')), fmt(m(s.rebuild, 'wallS') / m(s.warm, 'wallS')),
    fmt(m(s.rebuild, 'cpuS')), fmt(m(s.warm, 'cpuS')), fmt(m(s.rebuild, 'cpuS') / m(s.warm, 'cpuS')),
    s.rebuild.map((r, i) => fmt(r.wallS / s.warm[i].wallS)).join(' '),
    fmt(100 * m([...s.rebuild, ...s.warm], 'load'), 0),
  ]),
  'lrrrrrrlr',
));
