import { optionError } from '../errors.js';
import { splitOptions } from '../options.js';

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
 * Split `watch()` options into the compressor's (validated later) and the watch-only ones.
 * @param {object} [options]
 */
export function splitWatchOptions(options = {}) {
  const { api, own: w } = splitOptions(options, WATCH_DEFAULTS);
  nonNegativeMs('debounce', w.debounce);
  if (w.awaitWriteFinish !== false) nonNegativeMs('awaitWriteFinish', w.awaitWriteFinish);
  if (typeof w.usePolling !== 'boolean') throw optionError('options.usePolling', 'a boolean', w.usePolling);
  // A shard writes no manifest, which watch mode's batches are built on.
  const { shard } = api;
  if (shard !== undefined && shard !== null) throw optionError('options.shard', 'unset in watch mode', shard);
  return { api, watch: Object.freeze(w) };
}
