import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { normalizeOptions, settingsOf } from '../options.js';
import { walk } from './walk.js';
import { classify, decide, eligibility, brotliModeFor, estimatedCost, sameSettings } from './plan.js';
import { readManifest, buildManifest, writeManifest, variantPath, entryOf } from '../manifest.js';
import { compressFile, hashFile } from './compress-file.js';
import { makeTempDir, removeIfPresent, removeTemp, tempOwnerGone } from '../fs-atomic.js';
import { checkEncoders } from './encode.js';
import { createPool } from './pool.js';
import { createReport } from './report.js';
import { addDeltas } from './deltas.js';
import { relInside } from '../paths.js';

export const VERSION = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const TOOL = `precompressor@${VERSION}`;
const MAX_ATTEMPTS = 3;

/**
 * Batching in the pool, in estimatedCost() units (about 0.5 µs each for Brotli 11 on small
 * files): tasks up to ~15 ms of work share a message, and a worker is given up to ~30 ms of
 * small work ahead (see lib/compress/pool.js).
 */
const POOL_LIMITS = { batchCost: 32 * 1024, aheadCost: 64 * 1024 };

/** Files below this size are compressed to all encodings in one task (one read, one hash). */
const SPLIT_THRESHOLD = 256 * 1024;

/**
 * The tasks of one file: one for all encodings when the file is small, else one per encoding
 * so that a big file's encodings run in parallel.
 * @param {number} size
 * @param {{ encodings: readonly string[] }} opts
 */
export function splitTasks(size, opts) {
  if (size < SPLIT_THRESHOLD) return [{ encodings: [...opts.encodings] }];
  return opts.encodings.map((e) => ({ encodings: [e] }));
}

/** Would writing `next` change nothing but the date? Then the manifest is left as it is. */
function sameContent(previous, next) {
  if (previous === null) return false;
  const strip = ({ generatedAt: _g, ...rest }) => JSON.stringify(rest);
  return strip(previous) === strip(next);
}

function failureOf(rel, err) {
  const e = /** @type {any} */ (err);
  return { path: rel, code: e.code ?? 'ERR_PRECOMPRESSOR_FILE', message: e.message ?? String(err) };
}

/**
 * Compress every eligible file under `dir` to `.br` and `.gz`, remove stale variants and write
 * the manifest. Per-file failures are collected in the report (never thrown); a bad option or a
 * missing folder throws a PrecompressorError.
 * @param {string} dir
 * @param {object} [options]
 */
export async function precompress(dir, options = {}) {
  return (await pass(dir, options, new Set())).report;
}

/**
 * One incremental pass that leaves the files in `holdOut` (POSIX paths relative to `dir`) as the
 * previous pass left them: see the `hold` decision in lib/compress/plan.js. Watch mode's files still
 * being written; internal, not exported from the package. `held` lists the files held.
 * @param {string} dir
 * @param {object} options
 * @param {{ has(rel: string): boolean }} holdOut read once, while deciding (after the walk)
 * @param {{ onJobStart?: (task: import('./compress-file.js').CompressTask) => void }} [hooks] `onJobStart` sees each
 *   compression task as a CPU slot takes it (tests observe the scheduling order with it)
 */
export async function pass(dir, options, holdOut, hooks = {}) {
  const opts = normalizeOptions(dir, options);
  const report = createReport(opts);
  const abs = (rel) => path.join(opts.root, ...rel.split('/'));
  const settings = settingsOf(opts);
  checkEncoders(opts);

  // The previous manifest first: without one this is a cold run, and the workers start (load
  // their modules) while the folder is walked instead of after.
  let previous = null;
  let unreadable = null;
  try {
    previous = await readManifest(opts.manifest);
  } catch (err) {
    unreadable = err;
  }
  const pool = createPool(opts.concurrency, new URL('./worker.js', import.meta.url), { ...POOL_LIMITS, onStart: hooks.onJobStart });
  if (previous === null && !opts.dryRun) pool.warm();
  let walked;
  try {
    walked = await walk(opts.root, { dotfiles: opts.dotfiles });
  } catch (err) {
    await pool.close();
    throw err;
  }
  for (const rel of walked.outside) report.warn(rel, 'symlink resolves outside the folder (or is dangling): not taken');
  if (unreadable) report.warn(relInside(opts.root, opts.manifest) ?? opts.manifest, `${/** @type {Error} */ (unreadable).message}; starting afresh`);
  const classified = classify(walked.files, relInside(opts.root, opts.manifest), previous);
  const decisions = decide(classified, previous, { settings, tool: TOOL, force: opts.force, eligible: eligibility(opts), holdOut });

  /** @type {Map<string, import('../manifest.js').FileEntry>} */
  const entries = new Map();
  const failed = new Set();
  const removals = [];
  const io = pLimit(Math.max(4, opts.concurrency * 2));
  const { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold } = opts;
  const taskBase = { brotliQuality, gzipLevel, zstdLevel, zopfli, minRatio, streamThreshold, tempDir: null };
  /** @type {Promise<string> | null} made on the first compression (see makeTempDir) */
  let tempDir = null;
  try {
    return await run();
  } finally {
    await pool.close();
    if (tempDir) await tempDir.then(removeTemp, () => {});
  }

  async function run() {
    // Leftovers of killed runs; a temp of a run still going (same folder, another process) stays.
    for (const rel of walked.temps) if (tempOwnerGone(path.posix.basename(rel))) removals.push({ rel, why: 'temp' });
    for (const rel of classified.orphans) removals.push({ rel, why: 'orphan' });

    // Files we only need to hash: skipped ones (for the record) and changed-stat ones (to verify).
    const hashJobs = [];
    const toCompress = [];
    for (const d of decisions) {
      const { file } = d;
      if (d.action === 'fresh') {
        entries.set(file.rel, d.prev);
        report.count('unchanged', file);
      } else if (d.action === 'compress') {
        toCompress.push(file);
      } else if (d.action === 'hold') {
        if (d.prev) entries.set(file.rel, d.prev);
        else removeStale(d);
      } else if (d.action === 'skip') {
        removeStale(d);
        const prev = entryOf(previous, file.rel);
        const record = (hash) => {
          entries.set(file.rel, { size: file.size, mtimeMs: file.mtimeMs, hash, variants: {}, skipped: d.reason });
          report.count(d.reason, file);
        };
        if (prev && prev.size === file.size && prev.mtimeMs === file.mtimeMs) record(prev.hash);
        else hashJobs.push(io(() => hashFile(abs(file.rel), opts.streamThreshold).then((h) => record(h.hash))).catch((err) => fail(file.rel, err)));
      } else {
        hashJobs.push(
          io(async () => {
            const h = await hashFile(abs(file.rel), opts.streamThreshold);
            if (h.hash === d.prev.hash) {
              entries.set(file.rel, { ...d.prev, size: h.size, mtimeMs: h.mtimeMs });
              report.count('unchanged', file);
            } else {
              schedule(file);
              flush();
            }
          }).catch((err) => fail(file.rel, err)),
        );
      }
    }

    /** The variants on disk of a file that gets none now. */
    function removeStale(d) {
      for (const enc of d.onDisk?.keys() ?? []) removals.push({ rel: variantPath(d.file.rel, enc), why: 'stale' });
    }

    function fail(rel, err) {
      // One failure per file: its encodings run apart and usually fail the same way (EACCES, ENOSPC).
      if (failed.has(rel)) return;
      failed.add(rel);
      entries.delete(rel);
      report.fail(failureOf(rel, err));
    }

    const compressJobs = [];
    /** @type {{ cost: number, submit: () => void }[]} */
    let queued = [];
    /** Prepare the tasks of one file; flush() submits them. Its results are checked together. */
    function schedule(file, attempt = 1) {
      if (opts.dryRun) {
        report.change(file.rel, 'compress');
        return;
      }
      const results = [];
      const done = splitTasks(file.size, opts).map((t) => {
        let submit = () => {};
        const cost = t.encodings.reduce((n, e) => n + estimatedCost(file.size, e, opts), 0);
        const settled = new Promise((resolve) => {
          submit = () =>
            (async () => {
              if (failed.has(file.rel)) return;
              tempDir ??= makeTempDir(opts.root);
              const task = { ...taskBase, tempDir: await tempDir, abs: abs(file.rel), encodings: t.encodings, mode: brotliModeFor(file.rel), sizeHint: file.size };
              const r = await compressFile(task, pool, cost);
              results.push(r);
              for (const enc of t.encodings) report.progress(r.size, enc);
            })()
              .catch((err) => fail(file.rel, err))
              .then(resolve);
        });
        queued.push({ cost, submit });
        return settled;
      });
      compressJobs.push(Promise.all(done).then(() => finish(file, results, attempt)));
    }

    /** Submit the prepared tasks, most expensive first (the pool runs them in submission order). */
    function flush() {
      const batch = queued.sort((a, b) => b.cost - a.cost);
      queued = [];
      for (const t of batch) t.submit();
    }

    /** All tasks of a file are done: record it, or redo it if they saw different contents. */
    function finish(file, results, attempt) {
      if (failed.has(file.rel)) return;
      const [first] = results;
      if (results.some((r) => r.hash !== first.hash || r.mtimeMs !== first.mtimeMs)) {
        // The file changed between its encodings: do it again so that all variants match.
        if (attempt < MAX_ATTEMPTS) {
          schedule({ ...file, size: first.size }, attempt + 1);
          return flush();
        }
        return fail(file.rel, new Error('kept changing while it was being compressed'));
      }
      const out = Object.assign({}, ...results.map((r) => r.out));
      /** @type {import('../manifest.js').FileEntry} */
      const entry = { size: first.size, mtimeMs: first.mtimeMs, hash: first.hash, variants: {} };
      for (const enc of opts.encodings) if (out[enc] !== null) entry.variants[enc] = { size: out[enc] };
      if (Object.keys(entry.variants).length === 0) entry.skipped = 'not-smaller';
      entries.set(file.rel, entry);
      report.compressed(file.rel, entry);
    }

    // Largest (most expensive) work first, so that one big bundle does not finish last.
    report.plan(toCompress, opts.encodings);
    for (const file of toCompress) schedule(file);
    flush();

    await Promise.all(hashJobs);
    // compressJobs grows while files are verified or retried: drain until it is stable.
    for (let done = 0; done < compressJobs.length; ) {
      const batch = compressJobs.slice(done);
      done = compressJobs.length;
      await Promise.all(batch);
    }

    for (const rel of failed) {
      for (const enc of opts.encodings) removals.push({ rel: variantPath(rel, enc), why: 'failed' });
    }
    for (const r of removals) {
      if (r.why !== 'failed') report.change(r.rel, `remove (${r.why})`);
      if (opts.dryRun) continue;
      const remove = r.why === 'temp' ? removeTemp : removeIfPresent;
      // Cleaning up after a failed file is best effort: its failure is already reported.
      await remove(abs(r.rel)).catch((err) => r.why !== 'failed' && report.fail(failureOf(r.rel, err)));
    }

    const deltas = await addDeltas({ opts, entries, previous, onDisk: classified.deltas, report });
    const manifest = buildManifest({ tool: TOOL, settings, files: entries });
    // Every file fresh and nothing removed: the previous manifest's entries were kept as they are.
    const untouched = !deltas.changed && previous !== null && previous.tool === TOOL && sameSettings(previous.settings, settings) &&
      removals.length === 0 && failed.size === 0 && decisions.every((d) => d.action === 'fresh') &&
      decisions.length === Object.keys(previous.files).length;
    if (!opts.dryRun && !untouched && !sameContent(previous, manifest)) {
      try {
        await writeManifest(opts.manifest, manifest);
      } catch (err) {
        report.fail(failureOf(opts.manifest, err));
      }
    }
    return { report: { ...report.finish(manifest), deltas: deltas.summary }, held: decisions.filter((d) => d.action === 'hold').map((d) => d.file.rel) };
  }
}
