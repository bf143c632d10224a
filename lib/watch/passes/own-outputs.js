import { deltaStem, deltasOf, ownSiteDictionary } from '../../manifest/manifest.js';
import { variantPath, suffixEncoding, stemOf } from '../../encodings.js';
import { isTempPath } from '../../fs-atomic.js';

/** Which file-system events are watch mode's own writes, so that they start no batch. */

/** @typedef {import('./manifest-records.js').ManifestRecords} ManifestRecords */

/**
 * Is this event about one of our own outputs (pure)? Temps and the manifest are; a path in `ours`
 * is when removed, or written at the size the manifest lists. Anything else, such as a user's file
 * at a variant path, starts a batch whose pass decides whose file it is.
 * @param {string} rel POSIX path relative to the root
 * @param {string} event chokidar's event name
 * @param {{ manifestRel: string | null, ours: { get(rel: string): number | null | undefined },
 *   sizeOf: (rel: string) => number | null }} ctx
 */
export function isOwnOutput(rel, event, ctx) {
  if (isTempPath(rel) || rel === ctx.manifestRel) return true;
  const size = ctx.ours.get(rel);
  if (size === undefined) return false;
  if (event === 'unlink') return true;
  const now = ctx.sizeOf(rel);
  // gone: ours all the same (a removal of ours is no event either)
  return now === null || (size !== null && now === size);
}

/**
 * Our outputs: every variant and delta the manifest lists, with its size (looked up, not kept per
 * path), and the paths the last two passes removed or may have written, without one.
 */
export class OwnOutputs {
  /** @type {ManifestRecords | null} */ records = null;
  /** @type {Set<string>} */ #changed = new Set();
  /** @type {Set<string>} the pass before's (its events may come during the next pass) */ #before = new Set();

  /**
   * After a pass: its changes, and the manifest now.
   * @param {{ changes: { path: string, action: string }[], encodings: readonly string[],
   *   failures?: { path: string }[] }} report
   * @param {ManifestRecords | null} records
   */
  update(report, records) {
    this.#before = this.#changed;
    this.#changed = new Set();
    for (const c of report.changes) {
      if (c.action.startsWith('remove')) this.#changed.add(c.path);
      else if (c.action === 'compress' || c.action === 'from cache') {
        for (const enc of report.encodings) this.#changed.add(variantPath(c.path, enc));
      }
    }
    for (const f of report.failures ?? []) {
      for (const enc of report.encodings) this.#changed.add(variantPath(f.path, enc));
    }
    this.records = records;
  }

  /** @param {string} rel */
  has(rel) {
    return this.get(rel) !== undefined;
  }

  /**
   * The size the manifest lists for our output at `rel`; null: ours without a size; undefined: not ours.
   * @param {string} rel
   * @returns {number | null | undefined}
   */
  get(rel) {
    const r = this.records;
    if (r !== null && r.has(rel)) {
      // a file of the site; the site dictionary is one, but a pass writes it
      return rel === ownSiteDictionary(r.head)?.path ? r.entry(rel)?.size : undefined;
    }
    const listed = r === null ? undefined : listedOutput(r, rel);
    if (listed !== undefined) return listed;
    return this.#changed.has(rel) || this.#before.has(rel) ? null : undefined;
  }
}

/**
 * The size the records list for `rel` as a variant or a delta of a listed file, or undefined.
 * @param {ManifestRecords} records
 * @param {string} rel
 */
function listedOutput(records, rel) {
  const dStem = deltaStem(rel);
  if (dStem !== null) {
    const e = records.entry(dStem);
    const hit = deltasOf(dStem, e).find(([, , p]) => p === rel);
    return hit === undefined ? undefined : /** @type {any} */ (e).deltas[hit[0]][hit[1]].size;
  }
  const enc = suffixEncoding(rel);
  const v = enc === undefined ? undefined : records.entry(stemOf(rel, enc))?.variants;
  const e = /** @type {import('../../encodings.js').Encoding} */ (enc);
  return v !== undefined && Object.hasOwn(v, e) ? v[e]?.size : undefined;
}
