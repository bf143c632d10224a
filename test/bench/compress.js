// Compression benchmark: precompressor against its lower bound and its peers, on real corpora.
//
//   npm run bench -- [--only mixed|small] [--runs N] [--out results.json] [--max-wait S] [--contenders a,b] [--reference DIR]
//
// --reference DIR: another checkout of precompressor (with its node_modules); the cache rows are
// also measured with it, each just before ours on the same cache, for a before/after ratio.
//
// --max-wait S: before each measurement, wait up to S seconds (default 120, 0 = never) for the
// machine to be quiet, since other processes on the cores skew every figure.
//
// For each corpus shape, on fresh copies of the corpus, it measures wall time, ratio to the
// lower bound, output bytes and peak RSS of every contender in ./contenders.js, prints a
// Markdown table and checks the targets. The lower bound is max(single-thread CPU work / cores,
// largest single job), measured in this process with synchronous zlib calls (one file and one
// encoding at a time: Brotli q11 with a per-file window, gzip 9).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { buildCorpus, listFiles } from './corpus.js';
import { CONTENDERS } from './contenders.js';
import { APT_HINT, freshCopy, fmt, fmtInt, machineBusyS, machineInfo, markdownTable, median, missingTools, variantBytes, waitForQuiet } from './util.js';
import { DEFAULT_SKIP_EXTENSIONS } from '../../lib/options.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    runs: { type: 'string', default: '1' },
    out: { type: 'string' },
    contenders: { type: 'string' }, // comma-separated names, default all
    'max-wait': { type: 'string', default: '120' }, // seconds to wait for a quiet machine before each measurement
    reference: { type: 'string' }, // another checkout whose cache rows are measured beside ours
  },
});
const kinds = args.only ? args.only.split(',') : ['mixed', 'small'];
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`Expected --runs to be a positive integer, got ${JSON.stringify(args.runs)}`);
for (const k of kinds) if (!['mixed', 'small'].includes(k)) throw new Error(`Expected --only to be mixed or small, got ${JSON.stringify(k)}`);
const maxWaitS = Number(args['max-wait']);
const quietly = async (what) => {
  const q = await waitForQuiet({ maxWaitS });
  if (!q.quiet && maxWaitS > 0) console.error(`(machine still busy after ${fmt(q.waitedS, 0)} s; measuring ${what} anyway)`);
};
const contenders = args.contenders ? CONTENDERS.filter((c) => args.contenders.split(',').includes(c.name)) : CONTENDERS;

const cores = os.availableParallelism();
const skipExtensions = [...DEFAULT_SKIP_EXTENSIONS];
const skipSet = new Set(skipExtensions);
const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-bench-'));
const env = { cores, repoRoot, skipExtensions, tmp, reference: args.reference ? path.resolve(args.reference) : undefined };

const missing = missingTools(['/usr/bin/time', 'brotli', 'gzip']);
if (missing.length) {
  console.error(`Missing system tools: ${missing.join(', ')}. Install them with:\n  ${APT_HINT}\n` +
    'The benchmark goes on; rows that need them report an error and peak RSS is not measured without /usr/bin/time.');
}
if (!fs.existsSync(path.join(repoRoot, 'bin/precompressor.js'))) console.error('bin/precompressor.js is missing: its rows will report an error.');

/** Files every contender is asked to compress: not empty, not an already-compressed format. */
function eligible(files) {
  return files.filter((f) => f.size > 0 && !skipSet.has(path.posix.extname(f.rel).slice(1).toLowerCase()));
}

function brotliWindow(size) {
  let bits = 10;
  while (bits < 24 && 2 ** bits - 16 < size) bits++;
  return bits;
}

/** The lower bound and the file-by-file reference sizes (Brotli q11 / gzip 9). */
function measureBound(dir, files) {
  const Z = zlib.constants;
  const ref = new Map();
  const busy0 = machineBusyS();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  let work = 0;
  let largest = { ms: 0, rel: '', encoding: '' };
  for (const f of files) {
    const buf = fs.readFileSync(f.abs);
    const params = { [Z.BROTLI_PARAM_QUALITY]: 11, [Z.BROTLI_PARAM_LGWIN]: brotliWindow(buf.length), [Z.BROTLI_PARAM_SIZE_HINT]: buf.length };
    let t = performance.now();
    const br = zlib.brotliCompressSync(buf, { params }).length;
    const brMs = performance.now() - t;
    t = performance.now();
    const gz = zlib.gzipSync(buf, { level: 9 }).length;
    const gzMs = performance.now() - t;
    work += brMs + gzMs;
    if (brMs > largest.ms) largest = { ms: brMs, rel: f.rel, encoding: 'br' };
    if (gzMs > largest.ms) largest = { ms: gzMs, rel: f.rel, encoding: 'gzip' };
    ref.set(f.rel, { size: f.size, br, gz });
  }
  const boundS = Math.max(work / cores, largest.ms) / 1000;
  const own = process.cpuUsage(own0);
  const otherCpuS = busy0 === null ? null : Math.max(0, machineBusyS() - busy0 - (own.user + own.system) / 1e6);
  const wallS = (performance.now() - t0) / 1000;
  return { boundS, workS: work / 1000, largestJob: { ...largest, s: largest.ms / 1000 }, ref, otherLoad: otherLoad(otherCpuS, wallS) };
}

/** Share of the machine (all cores) that other processes used during a measurement, in %. */
function otherLoad(otherCpuS, wallS) {
  return otherCpuS === null || otherCpuS === undefined ? null : (100 * otherCpuS) / (wallS * cores);
}

/** Bytes a server would send per file with these variants: the variant if there is one, else the original. */
function effectiveBytes(ref, variants, key) {
  let ours = 0;
  let theirs = 0;
  let worseFiles = 0;
  for (const [rel, r] of ref) {
    const mine = variants.get(rel) ?? r.size;
    const best = Math.min(r[key], r.size);
    ours += Math.min(mine, r.size);
    theirs += best;
    if (mine > best) worseFiles++;
  }
  return { ours, reference: theirs, worseFiles };
}

const results = { machine: machineInfo(), date: new Date().toISOString(), runs, corpora: {}, rows: [], targets: [] };
console.error(`machine: ${results.machine.nproc} cores (${results.machine.cpu}), Node ${results.machine.node}; runs: ${runs}`);

try {
  for (const kind of kinds) {
    const base = path.join(tmp, `base-${kind}`);
    console.error(`\n[${kind}] building the corpus…`);
    const corpus = await buildCorpus(kind, base);
    const files = await listFiles(base);
    const elig = eligible(files);
    console.error(`[${kind}] ${corpus.files} files, ${fmt(corpus.bytes / 1e6, 1)} MB; ${elig.length} eligible. Measuring the lower bound (single thread)…`);
    await quietly('the lower bound');
    const bound = measureBound(base, elig);
    const sum = (key) => [...bound.ref.values()].reduce((n, r) => n + (r[key] < r.size ? r[key] : 0), 0);
    results.corpora[kind] = {
      files: corpus.files, bytes: corpus.bytes, eligibleFiles: elig.length, eligibleBytes: elig.reduce((n, f) => n + f.size, 0),
      boundS: bound.boundS, singleThreadWorkS: bound.workS, largestJob: bound.largestJob, referenceBrBytes: sum('br'), referenceGzBytes: sum('gz'),
    };
    console.error(`[${kind}] bound ${fmt(bound.boundS)} s (work ${fmt(bound.workS)} s / ${cores} cores; largest job ${fmt(bound.largestJob.s)} s: ${bound.largestJob.encoding} ${bound.largestJob.rel})`);
    results.rows.push({ contender: 'lower bound', corpus: kind, wallS: bound.boundS, xBound: 1, brBytes: sum('br'), gzBytes: sum('gz'), rssMB: null, otherLoad: bound.otherLoad,
      note: 'max(Σ per-file single-thread time of brotli q11 + gzip 9 / cores, largest single job); bytes: file-by-file zlib, variants smaller than the original' });

    for (const c of contenders) {
      const perLabel = new Map();
      let error = null;
      for (let r = 0; r < runs && !error; r++) {
        // A new folder per run, all removed at the end: ext4 scans past inodes freed in the last
        // minutes when it allocates new ones (perf: up to 13 % of a small-file run in
        // recently_deleted() and find_inode_bit()), so removing the previous contender's copy
        // here would slow the next contender down by an amount that depends on the order.
        const dir = path.join(tmp, `run-${kind}-${contenders.indexOf(c)}-${r}`);
        await freshCopy(base, dir);
        await quietly(c.name);
        try {
          for (const m of await c.measure(dir, env)) {
            const list = perLabel.get(m.label ?? '') ?? [];
            list.push({ ...m, bytes: await variantBytes(m.outDir ?? dir, elig.map((f) => f.rel)) });
            perLabel.set(m.label ?? '', list);
          }
        } catch (e) {
          error = e.message;
        }
      }
      if (error) {
        console.error(`[${kind}] ${c.name}: ERROR ${error}`);
        results.rows.push({ contender: c.name, corpus: kind, error, note: c.note });
        continue;
      }
      for (const [label, list] of perLabel) {
        const last = list.at(-1);
        const row = {
          contender: label ? `${c.name} ${label}` : c.name, corpus: kind,
          wallS: median(list.map((m) => m.wallS)), wallsS: list.map((m) => m.wallS),
          brBytes: last.bytes.brBytes, gzBytes: last.bytes.gzBytes, brFiles: last.bytes.brFiles, gzFiles: last.bytes.gzFiles,
          rssMB: list.some((m) => m.rssMB === null) ? null : Math.max(...list.map((m) => m.rssMB)),
          cpuS: median(list.map((m) => m.cpuS ?? NaN)),
          otherLoad: Math.max(...list.map((m) => otherLoad(m.otherCpuS, m.wallS) ?? NaN)),
          effectiveBr: effectiveBytes(bound.ref, last.bytes.br, 'br'), effectiveGz: effectiveBytes(bound.ref, last.bytes.gz, 'gz'),
          note: c.note,
        };
        row.xBound = row.wallS / bound.boundS;
        results.rows.push(row);
        console.error(`[${kind}] ${row.contender}: ${fmt(row.wallS)} s (${fmt(row.xBound)} × bound)`);
      }
    }
    checkTargets(kind);
  }
} finally {
  await fsp.rm(tmp, { recursive: true, force: true });
}

function checkTargets(kind) {
  const rows = results.rows.filter((r) => r.corpus === kind);
  const cold = rows.find((r) => r.contender === 'precompressor cold');
  const warm = rows.find((r) => r.contender === 'precompressor warm');
  const add = (name, pass, detail) => results.targets.push({ corpus: kind, target: name, pass, detail });
  if (!cold || !warm) return add('precompressor ran', false, rows.find((r) => r.contender === 'precompressor')?.error ?? 'not run');
  const limit = kind === 'mixed' ? 1.05 : 1.3;
  add(`cold ≤ ${limit} × bound`, cold.xBound <= limit, `${fmt(cold.xBound)} ×`);
  const peers = rows.filter((r) => !r.contender.startsWith('precompressor') && r.contender !== 'lower bound' && !r.error);
  const slowest = peers.filter((p) => p.wallS <= cold.wallS).map((p) => `${p.contender} ${fmt(p.wallS)} s`);
  if (peers.length) add('cold faster than every peer that ran', slowest.length === 0, slowest.length ? `not faster than: ${slowest.join(', ')}` : `${peers.length} peers`);
  add('warm ≤ 2% of cold', warm.wallS <= 0.02 * cold.wallS, `${fmt((100 * warm.wallS) / cold.wallS, 1)} %`);
  // The variant cache: an emptied output folder (a bundler's rebuild) and a restored cache (CI).
  for (const label of ['rebuild', 'CI restore']) {
    const r = rows.find((x) => x.contender === `precompressor cache ${label}`);
    if (r) add(`cache ${label} ≤ 5% of cold`, r.wallS <= 0.05 * cold.wallS, `${fmt((100 * r.wallS) / cold.wallS, 1)} %`);
  }
  for (const [key, label] of [['effectiveBr', '.br'], ['effectiveGz', '.gz']]) {
    const e = cold[key];
    add(`${label} bytes ≤ file-by-file reference`, e.ours <= e.reference,
      `${fmtInt(e.ours)} vs ${fmtInt(e.reference)} (bytes served per file; ${e.worseFiles} files larger than the reference)`);
  }
}

const table = markdownTable(['contender', 'corpus', 'wall s', '× bound', '.br bytes', '.gz bytes', 'peak RSS MB', 'CPU s', 'other load %'],
  results.rows.map((r) => (r.error
    ? [r.contender, r.corpus, null, null, null, null, `error: ${r.error.slice(0, 160)}`, null, null]
    : [r.contender, r.corpus, fmt(r.wallS), fmt(r.xBound), fmtInt(r.brBytes), fmtInt(r.gzBytes), fmt(r.rssMB, 0), fmt(r.cpuS, 1), fmt(r.otherLoad, 0)])), 'llrrrrrrr');
const loaded = results.rows.filter((r) => r.otherLoad > 5);
const warning = loaded.length
  ? `\n\n**Warning:** other processes used more than 5% of the machine during: ${loaded.map((r) => `${r.contender} (${r.corpus}, ${fmt(r.otherLoad, 0)}%)`).join(', ')}; those figures are not reliable.`
  : '';
const targets = markdownTable(['corpus', 'target', 'result', 'detail'],
  results.targets.map((t) => [t.corpus, t.target, t.pass ? 'pass' : 'FAIL', t.detail]));
const corpora = markdownTable(['corpus', 'files', 'MB', 'eligible files', 'bound s', 'single-thread work s', 'largest job'],
  Object.entries(results.corpora).map(([k, c]) => [k, c.files, fmt(c.bytes / 1e6, 1), c.eligibleFiles, fmt(c.boundS), fmt(c.singleThreadWorkS),
    `${fmt(c.largestJob.s)} s (${c.largestJob.encoding} ${c.largestJob.rel})`]));
const notes = [...new Map(results.rows.filter((r) => r.note).map((r) => [r.contender.replace(/ (cold|warm|rebuild|CI restore)$/, ''), r.note]))]
  .map(([n, t]) => `- **${n}**: ${t}`).join('\n');
console.log(`${corpora}\n\n${table}${warning}\n\n${targets}\n\n${notes}\n- **other load %**: CPU time used by other processes during the measurement, as a share of all cores (from /proc/stat)`);
if (args.out) {
  fs.writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
  console.error(`results written to ${args.out}`);
}
