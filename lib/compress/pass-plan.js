import path from 'node:path';
import { readManifest } from '../manifest.js';
import { walk } from './walk.js';
import { classify, decide, eligibility } from './plan.js';
import { findOwners } from './same-content.js';
import { userFileWarnings } from './ownership.js';
import { tempOwnerGone } from '../fs-atomic.js';
import { relInside, absPath } from '../paths.js';

/**
 * @typedef {{ opts: import('../options.js').Options, report: import('./report.js').Report, settings: object,
 *   tool: string, warm: () => void, afterWalk?: () => void | Promise<void> }} PlanContext
 *   warm: start the workers (a cold run: they load their modules while the folder is walked);
 *   afterWalk: a test's hook, once the folder is walked
 */

/**
 * The first step of a pass: read the previous manifest, walk the folder, find whose files sit at
 * our output paths, classify and decide. Problems found on the way go to the report.
 * @param {PlanContext} ctx
 * @param {{ has(rel: string): boolean }} holdOut files still being written (watch mode)
 */
export async function planPass(ctx, holdOut) {
  const { opts } = ctx;
  let unreadable = null;
  /** @type {import('../manifest.js').Manifest | null} */
  let previous = null;
  try {
    previous = await readManifest(opts.manifest);
  } catch (err) {
    unreadable = err;
  }
  if (previous === null && !opts.dryRun) ctx.warm();
  const walked = await walk(opts.root, { dotfiles: opts.dotfiles });
  await ctx.afterWalk?.();
  return planWalked(ctx, holdOut, previous, walked, unreadable);
}

/**
 * The rest of planPass() once the files are found (by the walk, or watch mode's statPaths()):
 * whose files sit at our output paths, classify and decide.
 * @param {PlanContext} ctx
 * @param {{ has(rel: string): boolean }} holdOut
 * @param {import('../manifest.js').Manifest | null} previous
 * @param {import('./walk.js').WalkResult} walked
 * @param {unknown} [unreadable] why the previous manifest could not be read
 */
export async function planWalked(ctx, holdOut, previous, walked, unreadable = null) {
  const { opts, report } = ctx;
  for (const rel of walked.outside) report.warn(rel, 'symlink resolves outside the folder (or is dangling): not taken');
  for (const { rel, why } of walked.leftOut) report.warn(rel, why);
  // A folder or file the walk could not read fails like a file that cannot be compressed; the rest goes on.
  for (const f of walked.failed) report.fail({ path: f.rel, code: f.code, message: f.message });
  const manifestRel = relInside(opts.root, opts.manifest);
  if (unreadable) {
    report.warn(manifestRel ?? opts.manifest, `${/** @type {Error} */ (unreadable).message}; starting afresh`);
  }
  const eligible = eligibility(opts);
  const encodings = /** @type {readonly string[]} */ (opts.encodings);
  // A copy of our variant found where this pass writes one is adopted; anything else there is the user's.
  const adoptable = (/** @type {{ rel: string, size: number }} */ stem, /** @type {string} */ enc) =>
    encodings.includes(enc) && eligible(stem.rel, stem.size) === null && !holdOut.has(stem.rel);
  const abs = (/** @type {string} */ rel) => absPath(opts.root, rel);
  const { streamThreshold } = opts;
  const owners = await findOwners(walked.files, manifestRel, previous, { abs, streamThreshold, adoptable });
  const classified = classify(walked.files, manifestRel, previous, owners.user);
  const decisions = decide(classified, previous, {
    settings: ctx.settings, tool: ctx.tool, force: opts.force, eligible, holdOut, encodings: opts.encodings,
    blocked: owners.blocked,
  });
  for (const w of userFileWarnings(decisions)) report.warn(w.path, w.message);
  /** @type {{ rel: string, why: string }[]} leftovers of killed runs (not those of a run still going) and orphans */
  const removals = walked.temps.filter((rel) => tempOwnerGone(path.posix.basename(rel)))
    .map((rel) => ({ rel, why: 'temp' }));
  for (const rel of classified.orphans) removals.push({ rel, why: 'orphan' });
  // What the walk found (device and inode), so that a removal takes only that file.
  const found = new Map(walked.files.map((f) => [f.rel, f]));
  // Watch mode looks at these in every batch: a symlink gets no event when its target changes.
  const links = walked.files.filter((f) => f.link).map((f) => f.rel);
  return { previous, owners, classified, decisions, removals, found, links };
}
