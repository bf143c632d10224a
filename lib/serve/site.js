import fs from 'node:fs';
import path from 'node:path';
import { PrecompressorError } from '../errors.js';
import { deltaStem, contentHash, readManifest, readManifestSync } from '../manifest.js';
import { ENCODINGS } from '../encodings.js';
import { relInside, absPath } from '../paths.js';
import { singleFlight } from '../flow.js';
import { createNegotiator } from './negotiate.js';
import { checkEntry, runAsync, realRootOf, manifestToHide } from './load.js';
import { buildEntry, settingsTagOf } from './table.js';
import { createWatcher } from './file-events.js';
import { createUnlistedLookup } from './unlisted.js';
import { SiteIndex } from './site-index.js';
import { BodyCache } from './body-cache.js';
import { auditFolder, auditMessage } from './audit.js';

/**
 * The served site: one owner for the manifest (as a compact SiteIndex), the entries built from it,
 * the bodies held in memory, the watchers and the reloads. Nothing is checked at startup but the
 * manifest itself: a path's entry (representations, precomputed headers) is built on its first
 * request, after its files are checked on disk once (lib/serve/load.js checkEntry()); bodies
 * join a bounded cache (BodyCache) when first sent from disk. A watcher event or a failed check
 * on open forgets the entry: the next request checks the disk again.
 */

const SUFFIXES = ENCODINGS.map((e) => e.suffix);
/** Entries kept built at most; the oldest built is forgotten first (rebuilding one costs a check). */
const MAX_ENTRIES = 16384;
/** A listed path whose file is missing or not servable: a miss until an event or a reload. */
const MISSING = Symbol('missing');

/**
 * @typedef {import('./table.js').Entry} Entry
 * @typedef {{ dirty: boolean, promise: Promise<Entry | null> }} Check a first check under way
 * @typedef {{
 *   index: SiteIndex,
 *   built: Map<string, Entry | typeof MISSING>,
 *   checking: Map<string, Check>,
 *   tctx: import('./table.js').TableContext,
 * }} Generation  what one manifest gives: the index and the entries built from it so far
 */

export class Site {
  closed = false;
  /** @type {ReturnType<typeof createWatcher> | null} */
  watcher = null;
  /** one reload at a time, at most one more queued behind it */
  reloads = singleFlight(() => this.doReload());

  /**
   * Read the manifest (synchronously: a missing or invalid one fails at startup) and start the watchers.
   * @param {Readonly<import('./options.js').ServeOptions>} opts
   */
  constructor(opts) {
    this.opts = opts;
    this.neg = createNegotiator(opts.encodings);
    this.realRoot = realRootOf(opts.root);
    this.manifestRel = opts.manifest === null ? null : relInside(opts.root, opts.manifest);
    this.unlisted = createUnlistedLookup(opts, this.realRoot);
    this.pathOptions = Object.freeze({ windows: process.platform === 'win32' });
    this.bodies = new BodyCache(opts.memoryBudget);
    this.rules = this.rulesNow();
    let index = null;
    if (opts.manifest !== null) {
      const collect = SiteIndex.collector(this.manifestRel);
      index = readManifestSync(opts.manifest, { maxBytes: opts.maxManifestBytes, collect });
      if (index === null && !opts.unlisted) throw missingManifest(opts);
    }
    this.gen = this.generation(index ?? new SiteIndex(this.manifestRel, null));
    if (index !== null && opts.onWarning !== null) void this.audit();
    if (opts.watch) {
      this.watcher = createWatcher({
        manifest: opts.manifest,
        onFile: (abs) => this.onFile(abs),
        onManifest: () => void this.reload().catch(() => {}),
      });
      this.watcher.update(this.watchedDirs());
    }
  }

  /**
   * Say once, after start-up, what in the folder does not match its manifest (lib/serve/audit.js):
   * the folder is walked in the background, so start-up does not wait for it.
   */
  async audit() {
    const { opts, gen } = this;
    const extra = new Set(gen.index.siteDictionary === null ? [] : [gen.index.siteDictionary]);
    const found = await auditFolder(opts.root, (rel) => gen.index.entry(rel), { manifestRel: this.manifestRel, dotfiles: opts.dotfiles === 'allow', extra })
      .catch(() => null);
    if (found === null || this.closed) return;
    const message = auditMessage(opts.root, { ...found, servesUnlisted: opts.unlisted });
    if (message !== null) /** @type {(m: string) => void} */ (opts.onWarning)(message);
  }

  /**
   * @param {SiteIndex} index
   * @returns {Generation}
   */
  generation(index) {
    const tctx = {
      root: this.opts.root, opts: this.opts, maskOf: this.neg.maskOf,
      settingsTag: settingsTagOf(index.settings), siteDictionary: index.siteDictionary,
    };
    return { index, built: new Map(), checking: new Map(), tctx };
  }

  /** Folders that hold listed files ('' the root), for resolveEntry(). */
  get dirs() {
    return this.gen.index.dirs;
  }

  /** Number of listed paths. */
  get size() {
    return this.gen.index.size;
  }

  /** The folders to watch: every folder of the index, as absolute paths. */
  watchedDirs() {
    return [...this.gen.index.dirs].map((d) => absPath(this.opts.root, d));
  }

  /**
   * The entry of a listed path: built (synchronously), being checked (a promise of it, null when
   * its file is missing or not servable), or undefined when the path is not listed.
   * @param {string} rel
   * @returns {Entry | Promise<Entry | null> | undefined}
   */
  find(rel) {
    const built = this.gen.built.get(rel);
    if (built !== undefined) return built === MISSING ? undefined : built;
    return this.gen.index.has(rel) ? this.build(rel) : undefined;
  }

  /**
   * Check a listed path's files on disk and build its entry. An event on its files while the
   * check runs makes the entry stale (served from disk as it is) and not kept.
   * @param {string} rel
   * @returns {Promise<Entry | null>}
   */
  build(rel) {
    const gen = this.gen;
    const under = gen.checking.get(rel);
    if (under !== undefined) return under.promise;
    const src = /** @type {import('../manifest.js').FileEntry} */ (gen.index.entry(rel));
    const cctx = {
      root: this.opts.root, realRoot: this.realRoot ??= realRootOf(this.opts.root), encodings: this.opts.encodings,
      realDirs: new Map(), dictionaries: this.opts.dictionaries, rules: this.rules,
    };
    // A small original is read and hashed (then its mtime does not matter) and its bytes held.
    const memory = src.size <= this.opts.memoryFileLimit && this.bodies.fits(src.size) ? ['identity'] : [];
    /** @type {Check} */
    const check = { dirty: false, promise: Promise.resolve(null) };
    check.promise = runAsync(checkEntry(rel, src, cctx, memory)).catch(() => null).then((found) => {
      if (gen.checking.get(rel) === check) gen.checking.delete(rel);
      const entry = found === null ? null : buildEntry(rel, src, gen.tctx, { ...found, bodies: {} });
      if (check.dirty) {
        if (entry !== null) entry.stale = true;
        return entry;
      }
      if (gen === this.gen && !this.closed) {
        this.keep(gen, rel, entry ?? MISSING);
        if (entry !== null && found?.bodies.identity) this.bodies.add(entry.identity, found.bodies.identity);
      }
      return entry;
    });
    gen.checking.set(rel, check);
    return check.promise;
  }

  /**
   * @param {Generation} gen
   * @param {string} rel
   * @param {Entry | typeof MISSING} entry
   */
  keep(gen, rel, entry) {
    gen.built.set(rel, entry);
    if (gen.built.size > MAX_ENTRIES) this.forget(/** @type {string} */ (gen.built.keys().next().value));
  }

  /**
   * Forget what is known of `rel`: its entry and bodies (the next request checks the disk again),
   * and mark a check under way as dirty.
   * @param {string} rel
   */
  forget(rel) {
    const { built, checking } = this.gen;
    const e = built.get(rel);
    if (e !== undefined) {
      built.delete(rel);
      if (e !== MISSING) this.dropBodies(e);
    }
    const c = checking.get(rel);
    if (c !== undefined) c.dirty = true;
  }

  /** @param {Entry} e */
  dropBodies(e) {
    this.bodies.drop(e.identity);
    for (const rep of Object.values(e.reps)) this.bodies.drop(rep);
  }

  /**
   * An entry's file no longer matches it (seen on open): served from disk from now on, and
   * checked again at the next request.
   * @param {Entry} entry
   */
  markStale(entry) {
    entry.stale = true;
    if (this.gen.built.get(entry.rel) === entry) this.forget(entry.rel);
    else this.dropBodies(entry);
  }

  /**
   * The whole body of `rep`, read through the descriptor `fd` already fstat'd as `st`, held in
   * the body cache when it is still the file the entry describes (the same fstat after the
   * read; an original's bytes must hash to the manifest's hash); null when it is not.
   * @param {Entry} entry
   * @param {import('./table.js').Rep} rep
   * @param {number} fd
   * @param {fs.Stats} st
   * @returns {Promise<Buffer | null>}
   */
  async fill(entry, rep, fd, st) {
    const buf = Buffer.allocUnsafe(rep.size);
    for (let n = 0; n < buf.length;) {
      const got = await read(fd, buf, n);
      if (got === 0) return null;
      n += got;
    }
    const now = await fstat(fd);
    if (now.size !== st.size || now.mtimeMs !== st.mtimeMs) return null;
    if (rep.encoding === 'identity' && contentHash(buf) !== entry.src.hash) return null;
    if (this.gen.built.get(entry.rel) === entry && !entry.stale) this.bodies.add(rep, buf);
    return buf;
  }

  /**
   * A watcher event on `abs`: forget the entries it touches (the file itself, the original of a
   * variant or delta, or every file of a folder when the platform did not name the file).
   * @param {string} abs
   */
  onFile(abs) {
    const rel = relInside(this.opts.root, abs);
    if (rel === null) return;
    if (rel === '*' || rel.endsWith('/*')) {
      const dir = rel.slice(0, -2);
      const { built, checking } = this.gen;
      for (const k of [...built.keys(), ...checking.keys()]) if (path.posix.dirname(k) === (dir === '' ? '.' : dir)) this.forget(k);
      return;
    }
    const stem = deltaStem(rel);
    this.forget(rel);
    for (const x of SUFFIXES) if (rel.endsWith(x)) this.forget(rel.slice(0, -x.length));
    if (stem !== null) this.forget(stem);
  }

  /**
   * Re-read the manifest, coalesced (singleFlight). Rejects (keeping the current manifest) if the manifest is invalid.
   * @returns {Promise<void>}
   */
  reload() {
    return this.reloads.run();
  }

  /** What a file's real path must pass to be served (lib/serve/open.js servableReal()). */
  rulesNow() {
    return { dotfiles: this.opts.dotfiles, manifestReal: realRootOf(manifestToHide(this.opts)) };
  }

  /** The new manifest replaces the old one at once; its entries are built as they are asked for. */
  async doReload() {
    const { opts } = this;
    if (opts.manifest === null) return;
    await this.unlisted.refresh();
    const collect = SiteIndex.collector(this.manifestRel);
    const m = await readManifest(opts.manifest, { maxBytes: opts.maxManifestBytes, collect });
    if (m === null && !opts.unlisted) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `No manifest at ${opts.manifest}`, { path: opts.manifest });
    }
    if (this.closed) return;
    this.realRoot = realRootOf(opts.root);
    this.rules = this.rulesNow();
    this.gen = this.generation(m ?? new SiteIndex(this.manifestRel, null));
    this.bodies.clear();
    this.watcher?.update(this.watchedDirs());
  }

  /** Bodies and bytes held in memory, and entries built. */
  memory() {
    return { bodies: this.bodies.live, bodyBytes: this.bodies.bytes, entries: this.gen.built.size };
  }

  /** Resolves when the reloads and first checks under way have finished. */
  async settled() {
    await this.reloads.idle();
    await Promise.all([...this.gen.checking.values()].map((c) => c.promise));
  }

  close() {
    this.closed = true;
    this.watcher?.close();
  }
}

/**
 * @param {number} fd
 * @param {Buffer} buf
 * @param {number} at
 * @returns {Promise<number>}
 */
function read(fd, buf, at) {
  return new Promise((resolve, reject) =>
    fs.read(fd, buf, at, buf.length - at, at, (err, n) => (err ? reject(err) : resolve(n))));
}

/**
 * @param {number} fd
 * @returns {Promise<fs.Stats>}
 */
function fstat(fd) {
  return new Promise((resolve, reject) => fs.fstat(fd, (err, st) => (err ? reject(err) : resolve(st))));
}

/**
 * The error for a manifest that was required (no `unlisted`, manifest not `false`) but is not there.
 * @param {Readonly<import("./options.js").ServeOptions>} opts
 */
function missingManifest(opts) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
    `No manifest at ${opts.manifest}: a manifest is required unless options.unlisted is set (serveStatic then ` +
    `serves only the files it lists). Run "precompressor ${opts.root}" first, pass options.manifest with its path, ` +
    'or set options.unlisted (or manifest: false) to serve files without one, as express.static does', { path: opts.manifest ?? undefined });
}
