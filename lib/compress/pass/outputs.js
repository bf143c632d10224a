import { buildManifest, writeManifest } from '../../manifest/manifest.js';
import { addDeltas, prepareDeltas } from '../dictionaries/index.js';
import { addSiteDictionary, summaryOf } from '../dictionaries/index.js';
import { variantPath } from '../../encodings.js';
import { removeIfPresent, removeTemp } from '../../fs-atomic.js';
import { sameSettings } from '../plan/index.js';
import { absPath } from '../../paths.js';
import { identityOf, sameIdentity, writeIndex } from './warm-index.js';

/**
 * The last steps of a pass (lib/compress/pass/precompress.js): what it removes, and the manifest.
 * @typedef {import('../../manifest/manifest.js').Manifest} Manifest
 * @typedef {{ opts: import('../../options.js').Options, report: import('./report.js').Report,
 *   settings: Manifest['settings'], tool: string, previous: Manifest | null, failed: Set<string>,
 *   removals: { rel: string, why: string }[],
 *   decisions: import('../plan/index.js').Decision[], decided: number, fresh: number,
 *   encodingsOf(rel: string): readonly string[], found: Map<string, { dev?: number, ino?: number }>,
 *   manifestIdentity?: import('./warm-index.js').Identity | null, written?: boolean,
 *   deltasReady?: ReturnType<typeof prepareDeltas> }} PassResult
 *   decisions: the held files' (`hold`); decided: how many decisions were made, all but the fresh ones
 *   (`fresh` counts those); found: what the walk found at each path that may be removed; manifestIdentity: the
 *   previous manifest's file as read (lib/compress/pass/warm-index.js); written: this pass wrote the manifest;
 *   deltasReady: the deltas' encoders and store, made ready by beginOutputs()
 */

/**
 * @param {string} rel
 * @param {unknown} err
 */
export function failureOf(rel, err) {
  const e = /** @type {any} */ (err);
  return { path: rel, code: e.code ?? 'ERR_PRECOMPRESSOR_FILE', message: e.message ?? String(err) };
}

/**
 * Would writing `next` change nothing but the date? Then the manifest is left as it is.
 * @param {Manifest | null} previous
 * @param {Manifest} next
 */
function sameManifest(previous, next) {
  if (previous === null) return false;
  const head = (/** @type {Manifest} */ { generatedAt: _g, files: _f, ...rest }) => JSON.stringify(rest);
  if (head(previous) !== head(next)) return false;
  // Entry by entry, in order: never the whole document as one string (two of them at 10^6 files).
  const before = Object.keys(previous.files);
  let i = 0;
  for (const rel in next.files) {
    if (before[i++] !== rel || JSON.stringify(previous.files[rel]) !== JSON.stringify(next.files[rel])) return false;
  }
  return i === before.length;
}

/**
 * Temps of killed runs, orphans, stale variants, and the variants of failed files.
 * @param {PassResult} pass
 */
export async function removeOutputs(pass) {
  const { opts, report } = pass;
  for (const rel of pass.failed) {
    for (const enc of pass.encodingsOf(rel)) pass.removals.push({ rel: variantPath(rel, enc), why: 'failed' });
  }
  for (const r of pass.removals) {
    if (r.why !== 'failed') report.change(r.rel, `remove (${r.why})`);
    if (opts.dryRun) continue;
    // Only the very file the walk found there (a variant of a failed file may have been written since).
    const found = r.why === 'failed' ? undefined : pass.found.get(r.rel);
    const abs = absPath(opts.root, r.rel);
    const remove = r.why === 'temp' ? removeTemp(abs) : removeIfPresent(abs, found);
    // Cleaning up after a failed file is best effort: its failure is already reported.
    await remove.catch((err) => r.why !== 'failed' && report.fail(failureOf(r.rel, err)));
  }
}

/**
 * Every file fresh, nothing removed, no delta written: the previous manifest stands as it is.
 * @param {PassResult} pass
 * @param {boolean} deltasChanged
 * @returns {pass is PassResult & { previous: Manifest }}
 */
function untouched(pass, deltasChanged) {
  const { previous } = pass;
  if (deltasChanged || previous === null || previous.tool !== pass.tool) return false;
  if (!sameSettings(previous.settings, pass.settings) || pass.removals.length > 0 || pass.failed.size > 0 ||
    pass.decided > 0) return false;
  let listed = 0;
  for (const rel in previous.files) if (Object.hasOwn(previous.files, rel)) listed++;
  return listed === pass.fresh;
}

/**
 * Write the manifest unless nothing but its date would change; the manifest of the pass.
 * @param {PassResult} pass
 * @param {Manifest} manifest
 * @param {boolean} deltasChanged
 * @returns {Promise<Manifest>}
 */
export async function writeIfChanged(pass, manifest, deltasChanged) {
  const { opts, previous } = pass;
  if (opts.dryRun) return manifest;
  // A delta written again (it was missing) is newer than the previous manifest: write a new one, or
  // the ownership rule (outputs are older than the manifest that lists them) takes it for the user's.
  if (!deltasChanged && sameManifest(previous, manifest)) return /** @type {Manifest} */ (previous);
  try {
    await writeManifest(opts.manifest, manifest);
    pass.written = true;
  } catch (err) {
    pass.report.fail(failureOf(opts.manifest, err));
  }
  return manifest;
}

/**
 * As the compressions start: the deltas' encoders probed and their store opened beside them, where they
 * would wait for the last file (#31); a turn of the event loop later, once the first encodes are under way.
 * @param {PassResult & { remote: import('./remote-run.js').RemoteRun | null }} pass
 */
export function beginOutputs(pass) {
  if (!pass.opts.deltas) return;
  pass.deltasReady = new Promise((resolve) => setImmediate(resolve)).then(() => prepareDeltas(pass.opts, pass.remote));
}

/**
 * After the compressions: the removals, the site dictionary and deltas, the manifest and the report.
 * @param {PassResult & { entries: Map<string, import('../../manifest/manifest.js').FileEntry>,
 *   deltasOnDisk: Map<string, number>, owners: { user: Set<string> },
 *   cache: ReturnType<typeof import('../cache/index.js').createCacheRun>,
 *   remote: import('./remote-run.js').RemoteRun | null }} pass
 */
export async function finishOutputs(pass) {
  await removeOutputs(pass);
  const input = {
    opts: pass.opts, entries: pass.entries, previous: pass.previous, onDisk: pass.deltasOnDisk,
    report: pass.report, userFiles: pass.owners.user, cache: pass.cache, remote: pass.remote,
    prepared: pass.deltasReady,
  };
  const site = await addSiteDictionary(input);
  // The pages' variants against the site dictionary are delta files that addDeltas() must leave.
  const onDisk = new Map([...input.onDisk].filter(([rel]) => !site.keep.has(rel)));
  const deltas = await addDeltas({ ...input, onDisk, siteApply: site.apply });
  const siteDictionary = site.path === null ? null : { path: site.path, hash: /** @type {string} */ (site.hash) };
  const changed = deltas.changed || site.changed;
  // The cache's upkeep (its figures count the deltas' entries) runs beside the manifest's write and sync (#31).
  const upkeep = pass.cache.finish(pass.report);
  let manifest;
  try {
    manifest = untouched(pass, changed) ? pass.previous : await writeIfChanged(pass,
      buildManifest({ tool: pass.tool, settings: pass.settings, files: pass.entries, siteDictionary }), changed);
  } finally {
    await upkeep;
  }
  pass.remote?.finish(pass.report);
  const held = pass.decisions.map((d) => d.file.rel);
  const report = {
    ...pass.report.finish(manifest),
    deltas: deltas.summary, siteDictionary: site.summary, cache: cacheSummary(pass),
  };
  return { report, held, manifest };
}

/**
 * finishOutputs(), then the warm index of the manifest on disk, when it is the pass's (written by
 * it, or the previous one standing and still the file that was read); the index is a cache, never
 * a reason to fail: a write that fails leaves a warning.
 * @param {Parameters<typeof finishOutputs>[0]} pass
 */
export async function finishIndexed(pass) {
  const out = await finishOutputs(pass);
  if (pass.opts.dryRun) return out;
  const now = identityOf(pass.opts.manifest);
  const stands = out.manifest === pass.previous && sameIdentity(pass.manifestIdentity ?? null, now);
  if (pass.written || stands) {
    await writeIndex(pass.opts, out.manifest, now).catch((err) => {
      out.report.warnings.push({ path: pass.opts.manifest, message: `warm index not written (${err.message})` });
    });
  }
  return out;
}

/**
 * The report's `cache`: the local cache's figures, and the remote's when there is one.
 * @param {{ cache: ReturnType<typeof import('../cache/index.js').createCacheRun>,
 *   remote: import('./remote-run.js').RemoteRun | null }} pass
 */
export function cacheSummary(pass) {
  return pass.remote ? { ...pass.cache.summary(), remote: pass.remote.summary() } : pass.cache.summary();
}

/** A delta summary of a run that made none. @returns {import('../dictionaries/index.js').DeltaSummary} */
const idleDeltas = () =>
  ({ encoders: [], files: 0, written: 0, reused: 0, removed: 0, bytes: 0, savedBytes: 0, unhashed: 0, byContent: 0,
    unavailable: null });

/**
 * The last step of a shard: its variants are in the caches, all it is for.
 * @param {PassResult & { entries: Map<string, import('../../manifest/manifest.js').FileEntry>,
 *   cache: ReturnType<typeof import('../cache/index.js').createCacheRun>,
 *   remote: import('./remote-run.js').RemoteRun | null,
 *   shard: import('../../types.js').ShardSummary | null }} pass
 */
export async function finishShard(pass) {
  await pass.cache.finish(pass.report);
  pass.remote?.finish(pass.report);
  const { tool, settings, entries: files } = pass;
  const manifest = buildManifest({ tool, settings, files, siteDictionary: null });
  const report = {
    ...pass.report.finish(manifest),
    deltas: idleDeltas(), siteDictionary: summaryOf(null, 'none'), cache: cacheSummary(pass),
    ...(pass.shard ? { shard: pass.shard } : {}),
  };
  return { report, held: [], manifest };
}
