import { recheckEntry } from './load.js';

/**
 * Background re-checks of stale entries. An entry is marked stale when a watcher event touches
 * its file or a variant, or when a streamed file no longer matches the table; from then on it is
 * served from disk as identity. Marked entries are re-checked against the disk in batches, then
 * replaced in the table (or removed when gone), unless they were marked again, or a reload
 * swapped the table, while they were being checked.
 * @param {{ table: import('./table.js').Table, closed: boolean }} state the middleware's
 */
export function createStaleQueue(state) {
  const queue = new Set();
  let draining = false;
  /** @type {Promise<void>} */
  let drained = Promise.resolve();

  /** @param {import('./table.js').Entry} entry */
  function markStale(entry) {
    entry.stale = true;
    queue.add(entry.rel);
    if (!draining && !state.closed) {
      draining = true;
      drained = new Promise((resolve) => setImmediate(() => drain().then(resolve)));
    }
  }

  async function drain() {
    while (queue.size > 0 && !state.closed) {
      const rels = [...queue];
      queue.clear();
      const table = state.table;
      await Promise.all(rels.map(async (rel) => {
        const old = table.files.get(rel);
        if (!old) return;
        const fresh = await recheckEntry(table, old).catch(() => null);
        if (queue.has(rel) || state.table !== table || table.files.get(rel) !== old) return;
        if (fresh === null) table.files.delete(rel);
        else table.files.set(rel, fresh);
      }));
    }
    draining = false;
  }

  /** Resolves when the re-checks under way have finished. */
  const settled = () => drained;
  return { markStale, settled };
}
