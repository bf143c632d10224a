import { PrecompressorError } from '../../errors.js';
import { contentHash, readManifestPieces, readManifestPiecesSync } from '../../manifest/manifest.js';
import { absPath, relInside } from '../../paths.js';
import { singleFlight } from '../../util/flow.js';
import { createNegotiator } from '../http/index.js';
import { realRootOf, manifestToHide } from './load.js';
import { readWhole } from '../bodies/index.js';
import { watchSite, watchedDirs } from './site-watch.js';
import { createUnlistedLookup } from './unlisted.js';
import { ManifestIndex, runIndex, runIndexAsync } from '../manifest-index/index.js';
import { Entries, MAX_ENTRIES } from './entries.js';
import { BodyCache } from '../bodies/index.js';
import { ContentHashes } from './content-hashes.js';
import { ManifestCompactor } from '../manifest-index/index.js';
import { auditSite } from './audit.js';

/**
 * The served site: the one owner of the manifest's index, its entries, the bodies held, the watchers
 * and the reloads (a new manifest is indexed while the old one serves).
 */

export class Site {
  closed = false;
  /** @type {ReturnType<typeof watchSite> | null} */
  watcher = null;
  /** one reload at a time, at most one more queued behind it */
  reloads = singleFlight(() => this.doReload());
  /** @type {import('./hot-reps.js').HotReps | null} answers of repeated requests, for an adapter that sends them */
  hot = null;

  /**
   * Read the manifest (synchronously: a missing or invalid one fails at startup) and start the watchers.
   * @param {Readonly<import('../http/index.js').ServeOptions>} opts
   */
  constructor(opts) {
    this.opts = opts;
    this.neg = createNegotiator(opts.encodings);
    this.realRoot = realRootOf(opts.root);
    this.manifestRel = opts.manifest === null ? null : relInside(opts.root, opts.manifest);
    this.unlisted = createUnlistedLookup(opts, this.realRoot, (rel) => this.entries.index.has(rel));
    this.pathOptions = Object.freeze({ windows: process.platform === 'win32' });
    this.bodies = new BodyCache(opts.memoryBudget);
    this.rules = this.rulesNow();
    /** @type {import('./entries.js').SiteParts} */
    this.parts = {
      opts, bodies: this.bodies, maskOf: this.neg.maskOf,
      disk: () => ({ realRoot: this.realRoot ??= realRootOf(opts.root), rules: this.rules }),
      maxEntries: MAX_ENTRIES, hashes: new ContentHashes(),
      watched: (rel) => !opts.watch || (this.watcher?.covers(absPath(opts.root, folderOf(rel))) ?? false),
    };
    const { manifest, maxManifestBytes } = opts;
    const bytes = manifest === null ? null
      : readManifestPiecesSync(manifest, { maxBytes: maxManifestBytes, sink: compact(manifest) });
    if (bytes === null && opts.manifest !== null && !opts.unlisted) throw missingManifest(opts);
    this.entries = new Entries(runIndex(this.indexOf(bytes)), this.parts);
    if (bytes !== null && opts.onWarning !== null) void this.audit();
    if (opts.watch) this.watcher = watchSite(this);
  }

  /**
   * The index of a manifest's kept text (none: an empty list), as steps to run.
   * @param {import('../manifest-index/index.js').Compact | null} bytes
   */
  indexOf(bytes) {
    const file = this.opts.manifest ?? '';
    return ManifestIndex.of(bytes?.bytes ?? EMPTY, file, this.manifestRel, bytes?.checkAll ?? false);
  }

  /** Say once, after start-up, what in the folder does not match its manifest (walked in the background). */
  async audit() {
    const { entries } = this;
    const onInvalid = (/** @type {string} */ rel, /** @type {string} */ problem) => entries.invalid(rel, problem);
    const message = await auditSite(this.opts, entries.index, onInvalid).catch(() => null);
    if (message !== null && !this.closed) /** @type {(m: string) => void} */ (this.opts.onWarning)(message);
  }

  /** Folders that hold listed files ('' the root), for resolveEntry(). */
  get dirs() {
    return this.entries.index.dirs;
  }

  /** Number of listed paths. */
  get size() {
    return this.entries.index.size;
  }

  /**
   * The entry of a listed path, a promise of it on its first request, or undefined (lib/serve/site/entries.js).
   * @param {string} rel
   */
  find(rel) {
    return this.entries.find(rel);
  }

  /** @param {import('./table.js').Entry} entry */
  markStale(entry) {
    this.entries.markStale(entry);
  }

  /**
   * The whole body of `rep` read through `fd`, held when it is still the file the entry describes.
   * @param {import('./table.js').Entry} entry
   * @param {import('./table.js').Rep} rep
   * @param {number} fd
   * @param {import('node:fs').Stats} st
   * @returns {Promise<Buffer | null>}
   */
  async fill(entry, rep, fd, st) {
    const buf = await readWhole(fd, rep.size, st);
    if (buf === null || (rep.encoding === 'identity' && contentHash(buf) !== entry.src.hash)) return null;
    if (this.entries.holds(entry)) this.bodies.add(rep, buf);
    return buf;
  }

  /**
   * Re-read the manifest, coalesced (singleFlight). Rejects (keeping the current manifest) if the manifest is invalid.
   * @returns {Promise<void>}
   */
  reload() {
    return this.reloads.run();
  }

  /** What a file's real path must pass to be served (lib/serve/bodies/open.js servableReal()). */
  rulesNow() {
    return { dotfiles: this.opts.dotfiles, manifestReal: realRootOf(manifestToHide(this.opts)) };
  }

  /** The new manifest replaces the old one at once; its entries are built as they are asked for. */
  async doReload() {
    const { opts } = this;
    if (opts.manifest === null) return;
    await this.unlisted.refresh();
    const { manifest, maxManifestBytes } = opts;
    const bytes = await readManifestPieces(manifest, { maxBytes: maxManifestBytes, sink: compact(manifest) });
    if (bytes === null && !opts.unlisted) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `No manifest at ${opts.manifest}`,
        { path: opts.manifest });
    }
    const index = await runIndexAsync(this.indexOf(bytes));
    if (this.closed) return;
    this.realRoot = realRootOf(opts.root);
    this.rules = this.rulesNow();
    this.entries.retired = true;
    this.entries = new Entries(index, this.parts);
    this.bodies.clear();
    this.watcher?.update(watchedDirs(this));
  }

  /**
   * What is held in memory, for diagnostics and benchmarks.
   */
  memory() {
    const { bodies, entries, parts } = this;
    const manifestBytes = entries.index.bytes.length;
    const { hashed } = parts.hashes;
    const hot = this.hot?.size ?? 0;
    return { bodies: bodies.live, bodyBytes: bodies.bytes, entries: entries.built.size, hashed, manifestBytes, hot };
  }

  /** Resolves when the reloads and first checks under way have finished. */
  async settled() {
    await this.reloads.idle();
    await this.entries.settled();
  }

  close() {
    this.closed = true;
    this.entries.retired = true;
    this.watcher?.close();
  }
}

/**
 * @param {string} file
 */
const compact = (file) => (/** @type {number} */ size) => new ManifestCompactor(file, size);

/** The folder of a site path ('' the root). @param {string} rel */
const folderOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

/** A manifest that lists nothing (none given, or none there with `unlisted`). */
const EMPTY = Buffer.from('{\n "schema": 3,\n "files": {\n }\n}\n');

/**
 * The error for a manifest that was required (no `unlisted`, manifest not `false`) but is not there.
 * @param {Readonly<import("../http/index.js").ServeOptions>} opts
 */
function missingManifest(opts) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
    `No manifest at ${opts.manifest}: a manifest is required unless options.unlisted is set (serveStatic then ` +
    `serves only the files it lists). Run "precompressor ${opts.root}" first, pass options.manifest with its path, ` +
    'or set options.unlisted (or manifest: false) to serve files without one, as express.static does',
    { path: opts.manifest ?? undefined });
}
