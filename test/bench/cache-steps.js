// The compression benchmark's two cache steps (a rebuild from the cache, a CI restore) run by this
// checkout and others in interleaved rounds, with the ratio of each round's pair: load that comes
// and goes hits a round's runs alike, where one run of each after the other (`npm run bench --
// --reference`) can differ by 2x on a busy machine.
//
//   npm run bench:cache-steps -- --against DIR[,DIR…] [--rounds 6] [--corpus small|mixed]
//
// One cold run of this checkout fills the cache. Each round, each checkout in a rotated order:
// rebuild = a fresh copy of the corpus (no variants, no manifest) with that cache; CI restore = the
// same with a fresh copy of the cache folder. Prints the median wall and CPU seconds (user + system,
// GNU time) of each, and of each other checkout the median of the per-round ratios this / it.
// For a steadier machine, see the autogroup line in rebuild.js.

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { buildCorpus } from './corpus.js';
import { fmt, freshCopy, machineInfo, median, schedulingInfo, timed } from './util.js';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: { against: { type: 'string' }, rounds: { type: 'string', default: '6' }, corpus: { type: 'string', default: 'small' } },
});
if (!args.against) throw new Error('Expected --against DIR[,DIR…]: other checkouts of precompressor (with node_modules)');
const rounds = Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`Expected --rounds to be a positive integer, got ${JSON.stringify(args.rounds)}`);
const checkouts = [here, ...args.against.split(',').map((d) => path.resolve(d))];
const STEPS = ['rebuild', 'CI restore'];

const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-cache-steps-'));
let serial = 0;
/** A fresh copy of `src` in a folder never used before (ext4 is slower in a folder just emptied). */
async function copyOf(src) {
  const dest = path.join(tmp, `d${serial++}`);
  await freshCopy(src, dest);
  return dest;
}

/** One run of `checkout`'s CLI on `dir` with `cacheDir`: { wallS, cpuS }. */
async function run(checkout, dir, cacheDir) {
  const r = await timed(process.execPath, [path.join(checkout, 'bin/precompressor.js'), dir, '--quiet', '--cache-dir', cacheDir]);
  if (r.code !== 0) throw new Error(`${checkout}: exit ${r.code}: ${r.stderr}`);
  await fsp.rm(dir, { recursive: true, force: true });
  return { wallS: r.wallS, cpuS: r.cpuS ?? NaN };
}

try {
  const corpus = path.join(tmp, 'corpus');
  const built = await buildCorpus(/** @type {'small' | 'mixed'} */ (args.corpus), corpus);
  const cache = path.join(tmp, 'cache');
  await run(here, await copyOf(corpus), cache);
  /** @type {Map<string, Record<string, { wallS: number, cpuS: number }[]>>} */
  const out = new Map(checkouts.map((c) => [c, Object.fromEntries(STEPS.map((s) => [s, []]))]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < checkouts.length; i++) {
      const c = checkouts[(i + r) % checkouts.length];
      out.get(c)['rebuild'].push(await run(c, await copyOf(corpus), cache));
      const restored = await copyOf(cache);
      out.get(c)['CI restore'].push(await run(c, await copyOf(corpus), restored));
      await fsp.rm(restored, { recursive: true, force: true });
    }
    console.error(`round ${r + 1}/${rounds} done`);
  }
  console.log(JSON.stringify({ ...machineInfo(), scheduling: schedulingInfo(), corpus: args.corpus, files: built.files, rounds }));
  const mine = /** @type {Record<string, { wallS: number, cpuS: number }[]>} */ (out.get(here));
  for (const [c, steps] of out) {
    for (const s of STEPS) {
      const m = (/** @type {'wallS' | 'cpuS'} */ k) => median(steps[s].map((x) => x[k]));
      const ratio = (/** @type {'wallS' | 'cpuS'} */ k) => median(mine[s].map((x, r) => x[k] / steps[s][r][k]));
      const vs = c === here ? '' : `; this / it: wall ${fmt(ratio('wallS'), 3)}, CPU ${fmt(ratio('cpuS'), 3)}`;
      console.log(`${c === here ? 'this' : c} ${s}: wall ${fmt(m('wallS'))} s, CPU ${fmt(m('cpuS'))} s${vs}`);
    }
  }
} finally {
  await fsp.rm(tmp, { recursive: true, force: true });
}
