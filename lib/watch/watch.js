import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { watch as chokidarWatch } from 'chokidar';
import { TreeWatcher } from './tree-watch.js';
import { PrecompressorError, optionError } from '../errors.js';
import { normalizeOptions, splitOptions } from '../options.js';
import { deltaStem, deltasOf } from '../manifest.js';
import { variantPath, suffixEncoding, stemOf } from '../encodings.js';
import { batchPass } from '../compress/batch.js';
import { wholePass } from './whole-pass.js';
import { isTempPath } from '../fs-atomic.js';
import { relInside, absPath, hasDotSegment } from '../paths.js';
import { singleFlight } from '../flow.js';
import { UnsettledFiles } from './unsettled.js';

/**
 * Watch mode: a whole pass first, then one batch per debounced set of file-system events, never
 * two at once. A batch looks only at the paths its events named (lib/compress/batch.js) against
 * the manifest kept in memory as text per entry (ManifestRecords); a whole pass again when events
 * cannot be trusted (a folder gone or replaced, the watcher's error, the manifest written by
 * someone else, a batch that says so). The passes do the deciding; this module turns events into
 * batches, keeps our own writes from triggering new ones, and tells each pass which files are
 * still being written, so that it leaves them as they were.
 */

/** @typedef {import('../compress/manifest-records.js').ManifestRecords} ManifestRecords */

/**
 * Events in one batch from which a whole pass runs instead: a burst that large may have overflowed
 * the kernel's event queue (16,384 by default on Linux), and Node does not report an overflow
 * (libuv drops the overflow event), so events may be missing. A whole pass costs about the same then.
 */
export const MANY_EVENTS = 4096;

/**
 * Can a batch of `count` events be trusted to name every change (pure)?
 * @param {number} count
 */
export const eventsTrusted = (count) => count < MANY_EVENTS;

/**
 * Options of `watch()` on top of the compressor's, with their defaults.
 * @type {Readonly<{ debounce: number, awaitWriteFinish: number | false, usePolling: boolean }>}
 */
export const WATCH_DEFAULTS = Object.freeze({
  debounce: 100, // ms of quiet after the last event before a batch runs
  awaitWriteFinish: 100, // ms a file's size and mtime must stay the same before its event counts; false = off
  usePolling: false, // stat polling instead of native events (network drives, some containers)
});

/**
 * @param {string} name
 * @param {unknown} v
 */
function nonNegativeMs(name, v) {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw optionError(`options.${name}`, 'a non-negative number of milliseconds', v);
  }
  return v;
}

/**
 * Split `watch()` options into the compressor's (validated later by normalizeOptions) and the
 * watch-only ones (validated here). Unknown keys are reported against both lists.
 * @param {object} [options]
 */
export function splitWatchOptions(options = {}) {
  const { api, own: w } = splitOptions(options, WATCH_DEFAULTS);
  nonNegativeMs('debounce', w.debounce);
  if (w.awaitWriteFinish !== false) nonNegativeMs('awaitWriteFinish', w.awaitWriteFinish);
  if (typeof w.usePolling !== 'boolean') throw optionError('options.usePolling', 'a boolean', w.usePolling);
  return { api, watch: Object.freeze(w) };
}

/**
 * Is this event about one of our own outputs, so that it must not start a batch? Pure.
 * - temp files and the manifest are always ours;
 * - a path in `ours` (a variant or delta that a pass listed, wrote or removed): its removal is
 *   ours; its creation or change is ours only when its size is the one the manifest lists
 *   (`null`: none listed). Anything else, such as a file of the user's written at a variant
 *   path, starts a batch, whose pass decides whose file it is (lib/compress/ownership.js).
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
 * Our outputs, as isOwnOutput() asks about them: every variant and delta the manifest lists, with
 * its size (looked up in the manifest records, not kept per path); the paths the last two passes
 * removed, or may have written (variants of a compressed file not kept), without one; a path the
 * manifest lists as a file of the site is not ours, except the site dictionary, which a pass writes.
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
      for (const enc of report.encodings) this.#changed.add(variantPath(f.path, /** @type {'br'} */ (enc)));
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
      return rel === r.head.siteDictionary?.path ? r.entry(rel)?.size : undefined;
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
  const dStem = rel.endsWith('.dcz') || rel.endsWith('.dcb') ? deltaStem(rel) : null;
  if (dStem !== null) {
    const e = records.entry(dStem);
    const hit = deltasOf(dStem, e).find(([, , p]) => p === rel);
    return hit === undefined ? undefined : /** @type {any} */ (e).deltas[hit[0]][hit[1]].size;
  }
  const enc = suffixEncoding(rel);
  const v = enc === undefined ? undefined : records.entry(stemOf(rel, enc))?.variants;
  const e = /** @type {'br'} */ (enc);
  return v !== undefined && Object.hasOwn(v, e) ? v[e]?.size : undefined;
}

/**
 * Watch `dir`: an incremental pass first, then one pass per debounced batch of changes.
 * Throws a PrecompressorError for bad options; a missing folder rejects `ready`.
 * Events: `batch` (the pass's report plus `events`, `initial` and `held`: the files it left as
 * they were because they were still being written), `error` (a pass or the watcher failed; the
 * watcher keeps going). Per-file failures are in each batch's `failures`, not `error` events.
 * @param {string} dir
 * @param {import('../types.js').WatchOptions} [options]
 * @returns {Watcher}
 */
export function watch(dir, options = {}) {
  const { api, watch: w } = splitWatchOptions(options);
  const opts = normalizeOptions(dir, api);
  return new Watcher(opts.root, opts.manifest, api, w);
}

/** @typedef {import('./unsettled.js').FileEvent} FileEvent the chokidar events a batch is made of */

/**
 * A new folder's files arrive as their own `add` events, once written: `addDir` starts nothing.
 * @param {string} event
 * @returns {event is FileEvent}
 */
const isFileEvent = (event) => event === 'add' || event === 'change' || event === 'unlink' || event === 'unlinkDir';

/**
 * Rejects with ERR_PRECOMPRESSOR_DIR unless `root` is a folder.
 * @param {string} root
 */
async function mustBeDirectory(root) {
  const st = await fs.promises.stat(root).catch(() => null);
  if (!st?.isDirectory()) {
    const why = st ? 'is not a directory' : 'does not exist';
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Directory ${root} ${why}`, { path: root });
  }
}

/**
 * The paths no event is wanted for (pure): our temp files, the manifest, dot paths without dotfiles.
 * @param {string} root
 * @param {string | null} manifestRel
 * @param {boolean} dotfiles
 * @returns {(abs: string) => boolean}
 */
function ignoredBy(root, manifestRel, dotfiles) {
  return (abs) => {
    const rel = relInside(root, abs);
    if (rel === null) return false;
    return isTempPath(rel) || rel === manifestRel || (!dotfiles && hasDotSegment(rel));
  };
}

/**
 * Native events: one watcher per folder (tree-watch.js); polling: chokidar's stat polling.
 * @param {string} root
 * @param {boolean} usePolling
 * @param {(abs: string) => boolean} ignored
 * @returns {import('chokidar').FSWatcher | TreeWatcher}
 */
function openTreeWatcher(root, usePolling, ignored) {
  if (!usePolling) return new TreeWatcher(root, ignored);
  // Not chokidar's awaitWriteFinish: a pass must know which files are still unsettled.
  return chokidarWatch(root, {
    ignoreInitial: true, followSymlinks: false, usePolling: true, awaitWriteFinish: false, ignored,
  });
}

export class Watcher extends EventEmitter {
  /** @type {NodeJS.Timeout | null} */ #timer = null;
  /** One pass at a time; a batch due meanwhile runs after it. */ #batches = singleFlight(() => this.#nextBatch());
  #started = false;
  #initial = true;
  /** @type {Map<string, FileEvent>} path → last event */ #pending = new Map();
  /** our outputs (see isOwnOutput) */ #ours = new OwnOutputs();
  /** the next batch must be a whole pass: events since the last one cannot be trusted */ #untrusted = false;
  /** @type {Set<string>} symlinks to files in the tree, which every batch looks at */ #links = new Set();
  /** @type {UnsettledFiles} files whose writes have not settled: every pass leaves them as they were */
  #unsettled;
  /** @type {import('chokidar').FSWatcher | TreeWatcher | null} */ #fsw = null;
  #closed = false;
  /** @type {Promise<void> | null} */ #closing = null;
  #manifestRel;
  #api;
  #w;

  /**
   * @param {string} root absolute
   * @param {string} manifest absolute
   * @param {object} api compressor options
   * @param {Readonly<typeof WATCH_DEFAULTS>} w
   */
  constructor(root, manifest, api, w) {
    super();
    this.root = root;
    this.manifest = manifest;
    this.#manifestRel = relInside(root, manifest);
    this.#api = api;
    this.#w = w;
    const wait = w.awaitWriteFinish === false ? 0 : w.awaitWriteFinish;
    this.#unsettled = new UnsettledFiles(root, wait, (event, rel) => this.#queue(event, rel));
    /** Resolves with the first pass's report once the watcher is listening; rejects if the folder is missing. */
    this.ready = this.#start();
    this.ready.catch(() => {}); // the rejection is the caller's to read; never an unhandled one
  }

  async #start() {
    const dotfiles = normalizeOptions(this.root, this.#api).dotfiles;
    await mustBeDirectory(this.root);
    const fsw = openTreeWatcher(this.root, this.#w.usePolling, ignoredBy(this.root, this.#manifestRel, dotfiles));
    this.#fsw = fsw;
    // relInside: the site path; null for the root itself and anything outside it
    fsw.on('all', (event, abs) => this.#onEvent(event, relInside(this.root, abs)));
    fsw.on('error', (err) => {
      this.#untrusted = true; // events may have been lost
      this.#error(/** @type {Error} */ (err));
    });
    await new Promise((resolve) => fsw.once('ready', () => resolve(undefined)));
    // Listen first, then pass: a change made during the first pass queues a second one.
    this.#started = true;
    const first = this.#batches.run();
    if (this.#pending.size > 0 && !this.#timer) this.#kick(); // due before the first pass started
    return /** @type {import('../types.js').WatchBatch} */ (await first);
  }

  /** The first pass, then each batch of the pending events (none: no pass). */
  async #nextBatch() {
    if (this.#initial) {
      this.#initial = false;
      return this.#pass([], true);
    }
    if (this.#closed || this.#pending.size === 0) return null;
    const events = [...this.#pending].map(([p, event]) => ({ event, path: p }));
    this.#pending.clear();
    return this.#pass(events, false);
  }

  /**
   * @param {string} event
   * @param {string | null} rel
   */
  #onEvent(event, rel) {
    if (this.#closed || !isFileEvent(event) || rel === null) return;
    // A folder gone (removed, renamed away, replaced): its files sent no event of their own.
    if (event === 'unlinkDir') this.#untrusted = true;
    if (this.#isOwn(rel, event)) return;
    const written = event === 'add' || event === 'change';
    if (written && this.#w.awaitWriteFinish !== false) return this.#unsettled.touch(event, rel);
    this.#unsettled.delete(rel);
    this.#queue(event, rel);
  }

  /**
   * Add an event to the next batch, which runs after `debounce` ms without another.
   * @param {FileEvent} event
   * @param {string} rel
   */
  #queue(event, rel) {
    this.#pending.set(rel, event);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#kick();
    }, this.#w.debounce);
  }

  /** A pass for the pending events now, or after the one running. */
  #kick() {
    if (this.#closed || !this.#started) return;
    this.#batches.run().catch((err) => this.#error(err));
  }

  /**
   * @param {string} rel
   * @param {string} event
   */
  #isOwn(rel, event) {
    const sizeOf = (/** @type {string} */ r) =>
      fs.statSync(absPath(this.root, r), { throwIfNoEntry: false })?.size ?? null;
    return isOwnOutput(rel, event, { manifestRel: this.#manifestRel, ours: this.#ours, sizeOf });
  }

  /**
   * One batch (a whole pass when it must be); emits `batch`. The first pass's errors reject `ready` instead.
   * @param {{ event: FileEvent, path: string }[]} events
   * @param {boolean} initial
   */
  async #pass(events, initial) {
    const { report, held, whole } = await this.#run(events, initial);
    // The events of the pass's own writes that arrived while it ran start no batch.
    for (const [rel, event] of this.#pending) if (this.#isOwn(rel, event)) this.#pending.delete(rel);
    for (const [rel, u] of this.#unsettled.files) if (this.#isOwn(rel, u.event)) this.#unsettled.delete(rel);
    const batch = { ...report, events, initial, whole, held };
    this.emit('batch', batch);
    return batch;
  }

  /**
   * The batch's pass: over the events' paths and the files still being written, against the
   * records; or a whole pass (the first, or after events that cannot be trusted), whose manifest
   * becomes the records.
   * @param {{ event: FileEvent, path: string }[]} events
   * @param {boolean} initial
   */
  async #run(events, initial) {
    const records = this.#ours.records;
    const trusted = !initial && !this.#untrusted && records !== null && eventsTrusted(events.length);
    if (trusted && (await records.current(this.manifest))) {
      const paths = [...events.map((e) => e.path), ...this.#unsettled.files.keys()];
      try {
        const out = await batchPass(this.root, this.#api, this.#unsettled, { paths, records, links: this.#links });
        if (out !== null) {
          if (out.whole) this.#untrusted = true;
          this.#ours.update(out.report, records);
          return { report: out.report, held: out.held, whole: false };
        }
      } catch (err) {
        this.#untrusted = true;
        throw err;
      }
    }
    this.#untrusted = false; // an event that cannot be trusted during this pass sets it again
    try {
      const whole = await wholePass(this.root, this.#api, this.#unsettled, this.manifest);
      const { report, held, records: next, links } = whole;
      this.#ours.update(report, next);
      this.#links = links;
      return { report, held, whole: true };
    } catch (err) {
      this.#untrusted = true;
      throw err;
    }
  }

  /** @param {Error} err */
  #error(err) {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else process.emitWarning(`precompressor watch: ${err.message}`);
  }

  /**
   * Stop watching. Waits for the pass in flight (so the manifest matches the files on disk);
   * events not yet in a pass are dropped: the next run sees those files by size and mtime.
   * @returns {Promise<void>}
   */
  close() {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#unsettled.close();
    this.#timer = null;
    this.#closing = (async () => {
      await this.ready.catch(() => {});
      await this.#fsw?.close();
      await this.#batches.idle();
    })();
    return this.#closing;
  }
}
