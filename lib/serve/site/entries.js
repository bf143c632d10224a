import path from 'node:path';
import { checkEntry, runAsync } from './load.js';
import { buildEntry, settingsTagOf } from './table.js';
import { SiteLink } from '../http/index.js';
import { Clock } from '../bodies/index.js';
import { SMALL_BODY } from '../bodies/index.js';

// The entries of one manifest, each built on its first request once its files are checked on disk,
// and kept (at most `maxEntries`) until an event forgets it; a reload retires them all.

/** Entries kept built at most (the Site's): rebuilding one costs a check on disk. */
export const MAX_ENTRIES = 16384;

/** A listed path whose file is missing, not servable, or whose entry is invalid: a miss until an event or a reload. */
class Missing {
  used = false;
  /** @type {import('../bodies/index.js').Ringed | null} */
  prev = null;
  /** @type {import('../bodies/index.js').Ringed | null} */
  next = null;

  /** @param {string} rel */
  constructor(rel) {
    this.rel = rel;
  }
}

/**
 * @typedef {import('./table.js').Entry} Entry
 * @typedef {{ dirty: boolean, promise: Promise<Entry | null> }} Check a first check under way
 * @typedef {{
 *   opts: Readonly<import('../http/index.js').ServeOptions>,
 *   bodies: import('../bodies/index.js').BodyCache,
 *   maskOf: (encodings: string[]) => number,
 *   disk: () => { realRoot: string | null, rules: { dotfiles: string, manifestReal: string | null } },
 *   maxEntries: number, hashes: import('./content-hashes.js').ContentHashes, watched: (rel: string) => boolean,
 * }} SiteParts  what the Site lends every generation: options, body cache, negotiator, the real root and
 *   rules now, the number of entries kept built, the content hashes of files whose mtime alone moved, and
 *   whether events would tell a path's changes (its folder watched, or watching off)
 */

/**
 * The entries kept built, at most `max`: when full, the one the Clock's hand stops at goes first
 * (through `onEvict`), and an entry dropped takes its bodies out of the body cache.
 */
class BuiltEntries {
  /** @type {Map<string, Entry | Missing>} */
  map = new Map();
  /** @type {Clock<Entry | Missing>} */
  clock = new Clock();
  /** counts the entries dropped (forgotten, evicted, replaced): what was looked up may resolve otherwise */
  changes = 0;

  /**
   * @param {import('../bodies/index.js').BodyCache} bodies
   * @param {number} max
   * @param {(rel: string) => void} onEvict
   */
  constructor(bodies, max, onEvict) {
    this.bodies = bodies;
    this.max = max;
    this.onEvict = onEvict;
  }

  get size() {
    return this.map.size;
  }

  /** @param {string} rel */
  get(rel) {
    return this.map.get(rel);
  }

  keys() {
    return this.map.keys();
  }

  /**
   * Keep `item` for `rel`, in place of what was.
   * @param {string} rel
   * @param {Entry | Missing} item
   */
  keep(rel, item) {
    this.drop(rel);
    if (this.clock.size > 0 && this.clock.size >= this.max) this.onEvict(this.clock.evict().rel);
    this.map.set(rel, item);
    this.clock.add(item);
  }

  /** @param {string} rel */
  drop(rel) {
    const e = this.map.get(rel);
    if (e === undefined) return;
    this.changes++;
    this.map.delete(rel);
    this.clock.remove(e);
    if (!(e instanceof Missing)) this.dropBodies(e);
  }

  /** @param {Entry} e */
  dropBodies(e) {
    this.bodies.drop(e.identity);
    for (const rep of Object.values(e.reps)) this.bodies.drop(rep);
  }
}

export class Entries {
  /** @type {Map<string, Check>} */
  checking = new Map();
  /** replaced by a newer manifest, or the server closed: nothing more is kept */
  retired = false;
  /** @type {Set<string>} paths whose invalid line was said */
  said = new Set();

  /**
   * @param {import('../manifest-index/index.js').ManifestIndex} index
   * @param {SiteParts} parts
   */
  constructor(index, parts) {
    this.index = index;
    this.parts = parts;
    this.built = new BuiltEntries(parts.bodies, parts.maxEntries, (rel) => this.forget(rel));
    this.tctx = {
      root: parts.opts.root, opts: parts.opts, maskOf: parts.maskOf,
      settingsTag: settingsTagOf(index.settings),
      siteLink: index.siteDictionary === null ? null : new SiteLink(index.siteDictionary),
    };
  }

  /**
   * The entry of a listed path: built (synchronously), being checked (a promise of it, null when
   * its file is missing or not servable), or undefined when the path is not listed.
   * @param {string} rel
   * @returns {Entry | Promise<Entry | null> | undefined}
   */
  find(rel) {
    const built = this.built.get(rel);
    if (built !== undefined) {
      built.used = true;
      return built instanceof Missing ? undefined : built;
    }
    const under = this.checking.get(rel);
    if (under !== undefined) return under.promise;
    return this.index.has(rel) ? this.build(rel) : undefined;
  }

  /**
   * Check a listed path's files on disk and build its entry; an event on them meanwhile makes it
   * stale (served from disk) and not kept.
   * @param {string} rel
   * @returns {Promise<Entry | null>}
   */
  build(rel) {
    const parsed = this.index.parsed(rel);
    if (parsed === null || 'problem' in parsed) {
      if (parsed !== null) this.invalid(rel, parsed.problem);
      return Promise.resolve(null);
    }
    const src = parsed.entry;
    const { bodies } = this.parts;
    const { cctx, memory } = checkInputs(src.size, this.parts);
    /** @type {Check} */
    const check = { dirty: false, promise: Promise.resolve(null) };
    check.promise = runAsync(checkEntry(rel, src, cctx, memory)).catch(() => null).then((found) => {
      if (this.checking.get(rel) === check) this.checking.delete(rel);
      const entry = found === null ? null : buildEntry(rel, src, this.tctx, { ...found, bodies: {} });
      if (check.dirty) {
        if (entry !== null) entry.stale = true;
        return entry;
      }
      // its folder not watched (refused, the inotify limit): checked again on every request, nothing held
      if (!this.parts.watched(rel)) return entry;
      if (found?.changed) this.changed(rel);
      if (!this.retired) {
        this.built.keep(rel, entry ?? new Missing(rel));
        if (entry !== null && found?.bodies.identity) bodies.add(entry.identity, found.bodies.identity);
      }
      return entry;
    });
    this.checking.set(rel, check);
    return check.promise;
  }

  /**
   * A listed path whose line is invalid (seen by its first request or the start-up audit): a miss, said once.
   * @param {string} rel
   * @param {string} problem
   */
  invalid(rel, problem) {
    if (this.retired) return;
    this.built.keep(rel, new Missing(rel));
    if (this.said.has(rel)) return;
    this.said.add(rel);
    const warn = this.parts.opts.onWarning;
    if (warn !== null) warn(`precompressor: invalid manifest ${this.index.file}: ${problem}; that path is not served`);
  }

  /**
   * A listed file whose mtime moved and whose content, hashed, is not the manifest's: said once.
   * @param {string} rel
   */
  changed(rel) {
    const warn = this.parts.opts.onWarning;
    if (this.retired || warn === null || this.said.has(rel)) return;
    this.said.add(rel);
    warn(`precompressor: ${this.parts.opts.root}: ${rel} changed since the manifest was written: sent from disk ` +
      'without its variants. Run precompressor on the folder again after the last tool that writes it');
  }

  /**
   * Forget `rel`'s entry and bodies (the next request checks the disk again); a check under way is dirty.
   * @param {string} rel
   */
  forget(rel) {
    this.built.drop(rel);
    const c = this.checking.get(rel);
    if (c !== undefined) c.dirty = true;
  }

  /** @param {string} dir a folder ('' the root) */
  forgetFolder(dir) {
    for (const k of [...this.built.keys(), ...this.checking.keys()]) if (inFolder(k, dir)) this.forget(k);
  }

  /**
   * An entry's file no longer matches it (seen on open): served from disk, checked again at the next request.
   * @param {Entry} entry
   */
  markStale(entry) {
    entry.stale = true;
    this.built.changes++;
    if (this.built.get(entry.rel) === entry) this.forget(entry.rel);
    else this.built.dropBodies(entry);
  }

  /**
   * Is `entry` the one this manifest serves for its path now (its bodies may be held)?
   * @param {Entry} entry
   */
  holds(entry) {
    return !this.retired && !entry.stale && this.built.get(entry.rel) === entry;
  }

  /** Changes since this manifest was loaded that may change what a path resolves to (lib/serve/site/hot-reps.js). */
  get changes() {
    return this.built.changes;
  }

  /** Resolves when the first checks under way have finished. */
  settled() {
    return Promise.all([...this.checking.values()].map((c) => c.promise));
  }
}


/**
 * What a first check of a file of `size` bytes is given (lib/serve/site/load.js checkEntry()): its
 * context, and the bodies to read into memory. A small original is read and hashed (then its
 * mtime does not matter) and its bytes held; a larger one is read and hashed when first sent (core.js).
 * @param {number} size
 * @param {SiteParts} parts
 */
export function checkInputs(size, { opts, bodies, disk, hashes }) {
  const cctx = {
    root: opts.root, encodings: opts.encodings, realDirs: new Map(), dictionaries: opts.dictionaries, hashes, ...disk(),
  };
  const memory = size <= Math.min(opts.memoryFileLimit, SMALL_BODY) && bodies.fits(size) ? ['identity'] : [];
  return { cctx, memory };
}

/**
 * Is `rel` a file directly in the folder `dir` ('' the root)?
 * @param {string} rel
 * @param {string} dir
 */
export function inFolder(rel, dir) {
  return path.posix.dirname(rel) === (dir === '' ? '.' : dir);
}
