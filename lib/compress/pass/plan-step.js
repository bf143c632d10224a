import path from 'node:path';
import { readManifest } from '../../manifest/manifest.js';
import { walk } from '../plan/index.js';
import { eligibility } from '../plan/index.js';
import { decodedAgainst } from '../plan/index.js';
import { recordedVariants } from '../plan/index.js';
import { canDecode } from '../encoders/index.js';
import { FolderPlan } from '../plan/index.js';
import { tempOwnerGone } from '../../fs-atomic.js';
import { relInside, absPath } from '../../paths.js';
import { identityOf, indexRelOf, sameIdentity } from './warm-index.js';

/**
 * Bytes found by a cold run's walk, its largest file left out, before it starts the workers: about
 * the work a pass does on this thread rather than wait for them (onThisThread() in cache-first.js).
 */
const WARM_AFTER_BYTES = 192 * 1024;

/**
 * @typedef {{ opts: import('../../options.js').Options, report: import('./report.js').Report, settings: object,
 *   tool: string, warm: () => void, afterWalk?: () => void | Promise<void>,
 *   onFresh: (rel: string, prev: import('../../manifest/manifest.js').FileEntry) => void }} PlanContext
 *   warm: start the workers (a cold run: they load their modules while the folder is walked);
 *   afterWalk: a test's hook, once the folder is walked; onFresh: a file with nothing to do (its
 *   previous entry stands), as the walk finds it
 */

/**
 * The first step of a pass: read the previous manifest, walk the folder and, a folder at a time,
 * find whose files sit at our output paths, classify and decide.
 * @param {PlanContext} ctx
 * @param {{ has(rel: string): boolean }} holdOut files still being written (watch mode)
 */
export async function planPass(ctx, holdOut) {
  const { opts } = ctx;
  let unreadable = null;
  /** @type {import('../../manifest/manifest.js').Manifest | null} */
  let previous = null;
  let manifestIdentity = identityOf(opts.manifest);
  try {
    previous = await readManifest(opts.manifest);
  } catch (err) {
    unreadable = err;
  }
  if (!sameIdentity(manifestIdentity, identityOf(opts.manifest))) manifestIdentity = null; // changed as it was read
  // A cold run starts the workers once the walk has found more than a small pass's bytes, so that
  // they load while the rest is walked; a small pass is done without them (cache-first.js).
  let warmable = previous === null && !opts.dryRun;
  let found = 0;
  let largest = 0;
  const plan = folderPlan(ctx, holdOut, previous);
  const ours = indexRelOf(relInside(opts.root, opts.manifest));
  const onFolder = (/** @type {import('../plan/index.js').WalkEntry[]} */ files) => {
    plan.folder(withoutIndex(files, ours));
    if (!warmable) return;
    for (const f of files) {
      found += f.size;
      largest = Math.max(largest, f.size);
    }
    if (found - largest > WARM_AFTER_BYTES) {
      warmable = false;
      ctx.warm();
    }
  };
  const walked = await walk(opts.root, { dotfiles: opts.dotfiles, onFolder });
  await ctx.afterWalk?.();
  return finishPlan(ctx, plan, walked, unreadable, manifestIdentity);
}

/**
 * A folder's files without the warm index (lib/compress/pass/warm-index.js): ours, like the manifest.
 * @param {import('../plan/index.js').WalkEntry[]} files
 * @param {string | null} indexRel
 */
const withoutIndex = (files, indexRel) =>
  (indexRel !== null && files.some((f) => f.rel === indexRel) ? files.filter((f) => f.rel !== indexRel) : files);

/**
 * The plan of files found another way than by the walk (watch mode's), decided as one folder.
 * @param {PlanContext} ctx
 * @param {{ has(rel: string): boolean }} holdOut
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 * @param {import('../plan/index.js').WalkResult} walked
 * @param {unknown} [unreadable] why the previous manifest could not be read
 */
export async function planWalked(ctx, holdOut, previous, walked, unreadable = null) {
  const plan = folderPlan(ctx, holdOut, previous);
  plan.folder(withoutIndex(walked.files, indexRelOf(relInside(ctx.opts.root, ctx.opts.manifest))));
  return finishPlan(ctx, plan, walked, unreadable);
}

/**
 * @param {PlanContext} ctx
 * @param {{ has(rel: string): boolean }} holdOut
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 */
function folderPlan(ctx, holdOut, previous) {
  const { opts } = ctx;
  const eligible = eligibility(opts);
  const encodings = /** @type {readonly string[]} */ (opts.encodings);
  // A copy of our variant found where this pass writes one is adopted; anything else there is the user's.
  const adoptable = (/** @type {{ rel: string, size: number }} */ stem, /** @type {string} */ enc) =>
    canDecode(enc) && encodings.includes(enc) && eligible(stem.rel, stem.size) === null && !holdOut.has(stem.rel);
  return new FolderPlan({
    manifestRel: relInside(opts.root, opts.manifest), previous, adoptable, onFresh: ctx.onFresh,
    decideCtx: {
      // A shard compresses its whole slice whatever the manifest says: its product is what the caches get.
      settings: ctx.settings, tool: ctx.tool, force: opts.force || opts.shard !== null, eligible, holdOut,
      encodings: opts.encodings,
    },
  });
}

/** Decoded this far only to tell whether files of the user's look like variants of ours (lookAlikes()). */
const LOOK_ALIKE_MAX = 1024 * 1024;

/**
 * The decode check of a file at a variant path: ours when it decodes to its source, or to a content
 * recorded with such a variant (a folder moved with its variants); else the user's.
 * @param {import('../../options.js').Options} opts
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 */
function checker(opts, previous) {
  /** @type {Map<string, Map<string, number>> | null} made on the first check */
  let recorded = null;
  const abs = (/** @type {string} */ rel) => absPath(opts.root, rel);
  return async (/** @type {import('../plan/index.js').Check} */ c) => {
    recorded ??= recordedVariants(previous);
    const made = recorded.get(`${c.encoding} ${c.size}`);
    const maxOther = Math.max(LOOK_ALIKE_MAX, ...(made?.values() ?? []));
    const r = await decodedAgainst(abs(c.rel), c.encoding, abs(c.stem), opts.streamThreshold, maxOther);
    if (r === null) return false;
    return r.same || made?.get(r.decoded.hash) === r.decoded.size ? true : r.decoded.hash;
  };
}

/**
 * After the files are found: the problems to the report, the decode checks, leftovers and orphans.
 * @param {PlanContext} ctx
 * @param {FolderPlan} plan
 * @param {import('../plan/index.js').WalkResult} walked
 * @param {unknown} unreadable
 * @param {import('./warm-index.js').Identity | null} [manifestIdentity] the previous manifest's file, as read
 */
async function finishPlan(ctx, plan, walked, unreadable, manifestIdentity = null) {
  const { opts, report } = ctx;
  for (const rel of walked.outside) report.warn(rel, 'symlink resolves outside the folder (or is dangling): not taken');
  for (const { rel, why } of walked.leftOut) report.warn(rel, why);
  // A folder or file the walk could not read fails like a file that cannot be compressed; the rest goes on.
  for (const f of walked.failed) report.fail({ path: f.rel, code: f.code, message: f.message });
  const manifestRel = relInside(opts.root, opts.manifest);
  if (unreadable) {
    report.warn(manifestRel ?? opts.manifest, `${/** @type {Error} */ (unreadable).message}; starting afresh`);
  }
  await plan.check(checker(opts, plan.ctx.previous));
  for (const w of plan.warnings) report.warn(w.path, w.message);
  /** @type {{ rel: string, why: string }[]} leftovers of killed runs (not those of a run still going) and orphans */
  const removals = walked.temps.filter((rel) => tempOwnerGone(path.posix.basename(rel)))
    .map((rel) => ({ rel, why: 'temp' }));
  for (const rel of plan.orphans) removals.push({ rel, why: 'orphan' });
  return {
    previous: plan.ctx.previous, owners: { user: plan.user, blocked: plan.blocked }, deltasOnDisk: plan.deltas,
    decisions: plan.decisions, fresh: plan.fresh, removals, found: plan.found, links: plan.links, manifestIdentity,
  };
}
