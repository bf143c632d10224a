/**
 * The decision between a batch and a whole pass (pure): a batch trusts its events to name every
 * change; where they cannot be trusted, a whole pass looks at every file again (docs/watch.md).
 */

/**
 * Events in one batch from which a whole pass runs instead: a burst that large may have overflowed
 * the kernel's queue (16,384 on Linux), which libuv does not report.
 */
export const MANY_EVENTS = 4096;

/**
 * @param {number} count
 */
export const eventsTrusted = (count) => count < MANY_EVENTS;

/** Why a pass is a whole one: the values of wholePassReason() and of the distrust reasons below. */
export const WHY = Object.freeze({
  first: 'the first pass',
  folderGone: 'a folder was removed, renamed away or replaced',
  watcherError: 'the watcher failed: events may have been lost',
  manyEvents: `${MANY_EVENTS} events or more: the kernel's queue may have overflowed`,
  noRecords: 'no manifest in memory',
  manifestNotOurs: 'the manifest was written by another process',
  siteDictionary: 'the batch touches the site dictionary',
  batchSaysSo: 'the last batch found that only a whole pass sets things right',
  batchFailed: 'the last batch failed',
  passFailed: 'the last whole pass failed',
});

/**
 * The reason an event makes the next pass a whole one, or null: a folder gone (removed, renamed
 * away, replaced by a file) sent no event for its files.
 * @param {string} event chokidar's event name
 */
export const eventDistrust = (event) => (event === 'unlinkDir' ? WHY.folderGone : null);

/**
 * Why the next pass must be a whole one, or null for a batch.
 * @param {{ initial: boolean, distrust: string | null, hasRecords: boolean, eventCount: number,
 *   manifestCurrent?: boolean }} s `distrust`: a reason set since the last whole pass started;
 *   `manifestCurrent`: the manifest on disk is the one kept in memory (checked last: it reads a file)
 * @returns {string | null}
 */
export function wholePassReason({ initial, distrust, hasRecords, eventCount, manifestCurrent = true }) {
  if (initial) return WHY.first;
  if (distrust !== null) return distrust;
  if (!hasRecords) return WHY.noRecords;
  if (!eventsTrusted(eventCount)) return WHY.manyEvents;
  return manifestCurrent ? null : WHY.manifestNotOurs;
}

/**
 * What a batch's outcome means: `now`, a whole pass runs in its place (its paths touch the site
 * dictionary); `next`, the next pass is a whole one.
 * @param {{ whole: boolean } | null} out
 * @returns {{ now: string | null, next: string | null }}
 */
export function batchOutcome(out) {
  if (out === null) return { now: WHY.siteDictionary, next: null };
  return { now: null, next: out.whole ? WHY.batchSaysSo : null };
}
