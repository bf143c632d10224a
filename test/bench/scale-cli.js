// The CLI on a big tree, this checkout against others, interleaved (issue #20's CLI targets).
//
//   npm run bench:scale-cli -- [--files 100000] [--unique 25000] [--against <checkout>,...]
//                              [--rounds 2] [--no-cold] [--tree <dir>] [--keep]
//
// Makes a tree of `--files` SVG icons (test/bench/scale-tree.js; `--unique` of them distinct), or
// takes `--tree` (kept). Cold: each checkout compresses its own copy of the uncompressed tree with
// an empty variant cache. Warm: `--rounds` re-runs on the compressed tree, checkouts alternating
// (a warm run of one checkout on a tree the other compressed is a warm run: same manifest).
// Reports wall time, CPU (user + sys), peak RSS and the load average before each run.

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { makeTree } from './scale-tree.js';
import { fmt, fmtInt, markdownTable, timed } from './util.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const string = (/** @type {string | undefined} */ def) => ({ type: /** @type {const} */ ('string'), default: def });
const flag = (/** @type {boolean} */ def) => ({ type: /** @type {const} */ ('boolean'), default: def });
const { values: args } = parseArgs({
  allowNegative: true,
  options: { files: string('100000'), unique: string(undefined), against: string(''), rounds: string('2'), cold: flag(true), tree: string(undefined), keep: flag(false) },
});
const files = Number(args.files);
const unique = Number(args.unique ?? args.files);
const rounds = Number(args.rounds);
const checkouts = [{ name: 'this', dir: repoRoot }, ...args.against.split(',').filter(Boolean).map((d) => ({ name: d, dir: path.resolve(d) }))];
const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-scale-cli-'));
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
const rows = [];

/** @type {{ wallS: number, cpuS: number } | null} the walk of the current round */
let walked = null;

/**
 * One timed run; its row, with its wall and CPU over the round's walk for a warm run.
 * @param {string} what
 * @param {string} name
 * @param {string[]} argv
 */
async function timedRow(what, name, argv) {
  const before = load();
  const r = await timed(process.execPath, argv, { timeoutMs: 3 * 3600e3 });
  if (r.code !== 0) console.error(`${name} ${what} exited ${r.code}: ${r.stderr}`);
  const over = (/** @type {number} */ x, /** @type {number} */ base) => (what === 'warm' && base > 0 ? fmt(x / base) : '');
  rows.push([what, name, fmt(r.wallS), fmt(r.cpuS), fmt(r.rssMB, 0), over(r.wallS, walked?.wallS ?? 0),
    over(r.cpuS, walked?.cpuS ?? 0), before]);
  console.error(`${what} ${name}: ${fmt(r.wallS)} s, ${fmt(r.cpuS)} s CPU, ${fmt(r.rssMB, 0)} MB (load ${before})`);
  return r;
}

/** One CLI run of `checkout` on `tree`. */
const run = (what, checkout, tree, cacheDir) =>
  timedRow(what, checkout.name, [path.join(checkout.dir, 'bin/precompressor.js'), tree, '--quiet', '--cache-dir', cacheDir]);

try {
  const source = args.tree ?? path.join(tmp, 'tree');
  if (!args.tree) {
    console.error(`making ${fmtInt(files)} files (${fmtInt(unique)} distinct)`);
    await makeTree(source, files, unique);
  }
  let compressed = source;
  if (args.cold) {
    for (const [i, c] of checkouts.entries()) {
      const copy = path.join(tmp, `cold-${i}`);
      await fsp.cp(source, copy, { recursive: true });
      await run('cold', c, copy, path.join(tmp, `cache-${i}`));
      if (i === 0) compressed = copy;
      else await fsp.rm(copy, { recursive: true, force: true });
    }
  }
  for (let k = 0; k < rounds; k++) {
    walked = await timedRow('walk', 'readdir + lstat', [path.join(repoRoot, 'test/bench/scale-walk.js'), compressed]);
    for (const c of k % 2 === 0 ? checkouts : [...checkouts].reverse()) await run('warm', c, compressed, path.join(tmp, 'cache-0'));
  }
} finally {
  if (!args.keep) await fsp.rm(tmp, { recursive: true, force: true });
}
console.log(`\n## CLI at scale: ${fmtInt(files)} files, Node ${process.version}, ${os.availableParallelism()} cores\n`);
console.log(markdownTable(['run', 'checkout', 'wall s', 'CPU s', 'peak RSS MB', 'wall × walk', 'CPU × walk', 'load average before'], rows, 'llrrrrrl'));
