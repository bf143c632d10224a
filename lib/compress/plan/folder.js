import pLimit from 'p-limit';
import { classify, decide } from './actions.js';
import { claimsOf, blockedEncodings, lookAlikes, userFileWarnings } from './ownership.js';
import { variantPath } from '../../encodings.js';

/**
 * The plan of a pass made one folder at a time as the walk reads it (a file's variants are in its
 * folder), keeping only what the pass acts on; a folder with files to decode waits for check().
 */

/**
 * @typedef {import('./walk.js').WalkEntry} WalkEntry
 * @typedef {import('./actions.js').Decision} Decision
 * @typedef {import('./ownership.js').Claims} Claims
 * @typedef {{ manifestRel: string | null, previous: import('../../manifest/manifest.js').Manifest | null,
 *   adoptable: (stem: WalkEntry, encoding: string) => boolean,
 *   decideCtx: Omit<import('./actions.js').DecideContext, 'blocked'>,
 *   onFresh: (rel: string, prev: import('../../manifest/manifest.js').FileEntry) => void }} FolderPlanContext
 *   onFresh: a file with nothing to do (its previous entry stands)
 */

/** Removed only when it is the very file the walk found there: stale variants of skipped and held files. */
const removesStale = (/** @type {Decision} */ d) =>
  d.onDisk !== undefined && (d.action === 'skip' || (d.action === 'hold' && d.prev === undefined));

export class FolderPlan {
  /** @type {Set<string>} files of the user's at our output paths */ user = new Set();
  /** @type {Map<string, Set<string>>} source → encodings it gets no variant of (a file of the user's is there) */
  blocked = new Map();
  /** @type {Decision[]} every decision but `fresh` */ decisions = [];
  /** number of `fresh` decisions */ fresh = 0;
  /** @type {Map<string, number>} delta files on disk (path → size) */ deltas = new Map();
  /** @type {string[]} */ orphans = [];
  /** @type {Map<string, WalkEntry>} what the walk found at each path that may be removed */ found = new Map();
  /** @type {{ source: string, path: string, message: string }[]} */ warnings = [];
  /** @type {{ files: WalkEntry[], claims: Claims }[]} folders waiting for check() */ waiting = [];
  /** @type {string[]} files that are symlinks (watch mode looks at them again in each batch) */ links = [];
  /** @type {Map<string, string[]>} files of the user's that look like ours (lookAlikes()) */ alike = new Map();

  /** @param {FolderPlanContext} ctx */
  constructor(ctx) {
    this.ctx = ctx;
  }

  /**
   * @param {WalkEntry[]} files
   */
  folder(files) {
    const { manifestRel, previous, adoptable } = this.ctx;
    for (const f of files) if (f.link) this.links.push(f.rel);
    const claims = claimsOf(files, manifestRel, previous, { adoptable });
    if (claims.check.length > 0) this.waiting.push({ files, claims });
    else this.decideFolder(files, claims.user);
  }

  /**
   * After the walk: decode the files that are ours only if they decode to their source's bytes (a
   * few at a time), decide the folders that waited for it, and put what was kept in path order.
   * @param {(check: import('./ownership.js').Check) => Promise<boolean | string>} decodes true: ours;
   *   false: the user's; a string: the user's, decoding to the content of that hash
   */
  async check(decodes) {
    const limit = pLimit(4);
    /** @type {{ rel: string, stem: string, hash: string }[]} */
    const others = [];
    await Promise.all(this.waiting.flatMap(({ claims }) => claims.check.map((c) => limit(async () => {
      const got = await decodes(c);
      if (got === true) return;
      claims.user.add(c.rel);
      if (typeof got === 'string') others.push({ rel: c.rel, stem: c.stem, hash: got });
    }))));
    this.alike = lookAlikes(others);
    for (const { files, claims } of this.waiting) this.decideFolder(files, claims.user);
    this.waiting = [];
    this.decisions.sort((a, b) => byPath(a.file.rel, b.file.rel));
    this.orphans.sort(byPath);
    this.links.sort(byPath);
    this.warnings.sort((a, b) => byPath(a.source, b.source));
  }

  /**
   * @param {WalkEntry[]} files
   * @param {Set<string>} user the folder's files of the user's at our output paths
   */
  decideFolder(files, user) {
    const { manifestRel, previous, decideCtx, onFresh } = this.ctx;
    const blocked = blockedEncodings(user);
    for (const rel of user) this.user.add(rel);
    for (const [rel, encs] of blocked) this.blocked.set(rel, encs);
    const classified = classify(files, manifestRel, previous, user);
    for (const [rel, size] of classified.deltas) this.deltas.set(rel, size);
    const decisions = decide(classified, previous, { ...decideCtx, blocked });
    for (const d of decisions) {
      if (!d.blocked) continue;
      for (const w of userFileWarnings([d], this.alike)) this.warnings.push({ source: d.file.rel, ...w });
    }
    /** @type {Set<string>} */
    const removable = new Set(classified.orphans);
    for (const rel of classified.orphans) this.orphans.push(rel);
    for (const d of decisions) {
      if (d.action === 'fresh') {
        this.fresh++;
        onFresh(d.file.rel, d.prev);
        continue;
      }
      this.decisions.push(d);
      if (!removesStale(d)) continue;
      const onDisk = /** @type {Map<string, number>} */ (d.onDisk);
      for (const enc of onDisk.keys()) removable.add(variantPath(d.file.rel, /** @type {any} */ (enc)));
    }
    if (removable.size > 0) for (const f of files) if (removable.has(f.rel)) this.found.set(f.rel, f);
  }
}

/** @param {string} a @param {string} b */
const byPath = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
