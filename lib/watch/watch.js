import { EventEmitter } from 'node:events';
import { normalizeOptions } from '../options.js';
import { relInside } from '../paths.js';
import { singleFlight } from '../util/flow.js';
import { UnsettledFiles } from './events/index.js';
import { splitWatchOptions } from './watch-options.js';
import { isFileEvent, mustBeDirectory, ignoredBy, openTreeWatcher } from './events/index.js';
import { EventQueue } from './events/index.js';
import { PassRunner } from './passes/index.js';
import { eventDistrust, WHY } from './passes/index.js';

export { WATCH_DEFAULTS, splitWatchOptions } from './watch-options.js';
export { isOwnOutput, OwnOutputs } from './passes/index.js';
export { MANY_EVENTS, eventsTrusted } from './passes/index.js';

// Watch mode: a whole pass first, then one batch per debounced set of events, never two at once; this
// module wires the pieces of lib/watch/ together.

/** @typedef {import('./events/index.js').FileEvent} FileEvent */

/**
 * Watch `dir` (docs/watch.md). Throws a PrecompressorError for bad options; a folder missing or that
 * cannot be watched rejects `ready`. Events: `batch` (a pass's report, with `held`: files still being
 * written) and `error` (the watcher keeps going).
 * @param {string} dir
 * @param {import('../types.js').WatchOptions} [options]
 * @returns {Watcher}
 */
export function watch(dir, options = {}) {
  const { api, watch: w } = splitWatchOptions(options);
  const opts = normalizeOptions(dir, api);
  return new Watcher(opts.root, opts.manifest, api, w);
}

export class Watcher extends EventEmitter {
  /** One pass at a time; a batch due meanwhile runs after it. */ #batches = singleFlight(() => this.#nextBatch());
  #started = false;
  #initial = true;
  /** the next batch's events */ #queue;
  /** @type {UnsettledFiles} files whose writes have not settled: every pass leaves them as they were */
  #unsettled;
  #runner;
  /** @type {import('chokidar').FSWatcher | import('./events/index.js').TreeWatcher | null} */ #fsw = null;
  #closed = false;
  /** @type {Promise<void> | null} */ #closing = null;
  #manifestRel;
  #api;
  #w;

  /**
   * @param {string} root absolute
   * @param {string} manifest absolute
   * @param {object} api compressor options
   * @param {Readonly<typeof import('./watch-options.js').WATCH_DEFAULTS>} w
   */
  constructor(root, manifest, api, w) {
    super();
    this.root = root;
    this.manifest = manifest;
    this.#manifestRel = relInside(root, manifest);
    this.#api = api;
    this.#w = w;
    this.#queue = new EventQueue(w.debounce, () => this.#kick());
    this.#runner = new PassRunner(root, manifest, this.#manifestRel, api);
    const wait = w.awaitWriteFinish === false ? 0 : w.awaitWriteFinish;
    this.#unsettled = new UnsettledFiles(root, wait, (event, rel) => this.#queue.add(event, rel));
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
    let listed = false;
    fsw.on('error', (err) => {
      if (!listed) return; // rejects ready instead (below)
      this.#runner.distrust(WHY.watcherError);
      this.#error(/** @type {Error} */ (err));
    });
    // an error before ready (a folder that cannot be watched) rejects ready: nothing would be watched
    await new Promise((resolve, reject) => {
      fsw.once('ready', () => resolve(listed = true));
      fsw.once('error', reject);
    });
    // Listen first, then pass: a change made during the first pass queues a second one.
    this.#started = true;
    const first = this.#batches.run();
    if (this.#queue.size > 0 && !this.#queue.waiting) this.#kick(); // due before the first pass started
    return /** @type {import('../types.js').WatchBatch} */ (await first);
  }

  /** The first pass, then each batch of the pending events (none: no pass). */
  async #nextBatch() {
    if (this.#initial) {
      this.#initial = false;
      return this.#pass([], true);
    }
    if (this.#closed || this.#queue.size === 0) return null;
    return this.#pass(this.#queue.take(), false);
  }

  /**
   * @param {string} event
   * @param {string | null} rel
   */
  #onEvent(event, rel) {
    if (this.#closed || !isFileEvent(event) || rel === null) return;
    this.#runner.distrust(eventDistrust(event));
    if (this.#runner.isOwn(rel, event)) return;
    const written = event === 'add' || event === 'change';
    if (written && this.#w.awaitWriteFinish !== false) return this.#unsettled.touch(event, rel);
    this.#unsettled.delete(rel);
    this.#queue.add(event, rel);
  }

  /** A pass for the pending events now, or after the one running. */
  #kick() {
    if (this.#closed || !this.#started) return;
    this.#batches.run().catch((err) => this.#error(err));
  }

  /**
   * One batch (a whole pass when it must be); emits `batch`. The first pass's errors reject `ready` instead.
   * @param {{ event: FileEvent, path: string }[]} events
   * @param {boolean} initial
   */
  async #pass(events, initial) {
    const { report, held, whole } = await this.#runner.run(events, initial, this.#unsettled);
    // The events of the pass's own writes that arrived while it ran start no batch.
    const isOwn = (/** @type {string} */ rel, /** @type {string} */ event) => this.#runner.isOwn(rel, event);
    this.#queue.drop(isOwn);
    for (const [rel, u] of this.#unsettled.files) if (isOwn(rel, u.event)) this.#unsettled.delete(rel);
    const batch = { ...report, events, initial, whole, held };
    this.emit('batch', batch);
    return batch;
  }

  /** @param {Error} err */
  #error(err) {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else process.emitWarning(`precompressor watch: ${err.message}`);
  }

  /**
   * Stop watching after the pass in flight; events not yet in a pass are dropped (the next run sees
   * those files by size and mtime).
   * @returns {Promise<void>}
   */
  close() {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.#queue.close();
    this.#unsettled.close();
    this.#closing = (async () => {
      await this.ready.catch(() => {});
      await this.#fsw?.close();
      await this.#batches.idle();
    })();
    return this.#closing;
  }
}
