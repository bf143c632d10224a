import { removeIfPresentSync, writeAtomicSync, writeAtomicWith } from '../../fs-atomic.js';

/**
 * Taking a variant from the store into the output once its bytes decode to the source: whoever can
 * write the store can rewrite a record too. The proof runs where the source's bytes are (a worker).
 *
 * @typedef {{ target: string, keepBelow: number, mtime: Date, tempDir?: string | null, held?: boolean }} Placement
 *   tempDir: a folder on the target's file system for the temp file; held: `target` names the file
 *   through its folder held open and checked by the caller (lib/held-folder.js inHeldFolderOnce())
 * @typedef {{ kept: number | null, encodeMs: number }} Taken kept: the variant's size, or null when not kept
 * @typedef {{ store: import('./variant-store.js').StoreDescriptor, read?: boolean, markedSince?: number }} From
 *   the pass's store; markedSince: when the previous run started (ms): an entry used since is not
 *   marked again, so that eviction orders entries by the runs that used them and a rebuild run again
 *   and again marks nothing
 * @typedef {ReturnType<typeof import('./entry-files.js').taskStats>} Stats
 */

/**
 * What the record alone decides: null on a miss (none, or a record without bytes that this run
 * would keep: encode it); `taken` when the output is not small enough for this run (the target is
 * removed: nothing of the entry reaches the output); undefined when the bytes are to be proven.
 * @param {Omit<import('./variant-store.js').Stored, 'bytes'> | null} stored
 * @param {boolean} hasBytes
 * @param {Placement} at
 * @returns {Taken | null | undefined}
 */
function byRecord(stored, hasBytes, at) {
  if (stored === null) return null;
  if (stored.size < at.keepBelow) return hasBytes ? undefined : null;
  try {
    removeIfPresentSync(at.target, { held: at.held });
  } catch {
    return null; // the caller meets and reports it
  }
  return { kept: null, encodeMs: stored.encodeMs };
}

/**
 * An unproven entry is dropped (whoever wrote it, it is not a variant of this source) and counted.
 * @param {import('./variant-store.js').VariantStore} store
 * @param {string} key
 * @param {Stats} stats
 * @returns {Promise<null>}
 */
async function reject(store, key, stats) {
  await store.evict(key);
  stats.rejected++;
  return null;
}

/**
 * Put the cached variant of `key` in place when smaller than `keepBelow` and proven, else remove
 * `target`; null on a miss.
 * @param {import('./variant-store.js').VariantStore} store
 * @param {From} from
 * @param {string} key
 * @param {Placement & { proves: (bytes: Buffer) => boolean }} at
 * @param {Stats} stats
 * @returns {Promise<Taken | null>}
 */
export async function takeVariant(store, from, key, at, stats) {
  const stored = await store.get(key, { below: at.keepBelow, touchOlderThan: from.markedSince });
  const decided = byRecord(stored, (stored?.bytes ?? null) !== null, at);
  if (decided !== undefined) return decided;
  const { bytes, size, encodeMs } = /** @type {import('./variant-store.js').Stored & { bytes: Buffer }} */ (stored);
  if (!at.proves(bytes)) return reject(store, key, stats);
  try {
    writeAtomicSync(at.target, bytes, { mtime: at.mtime, tempDir: at.tempDir, checkParent: !at.held });
  } catch {
    return null; // an output that cannot be written: the caller encodes, and meets and reports the error itself
  }
  return { kept: size, encodeMs };
}

/**
 * takeVariant() for a streamed file: the bytes are decoded on their way to the temp file, renamed
 * into place only once proven.
 * @param {import('./variant-store.js').VariantStore} store
 * @param {From} from
 * @param {string} key
 * @param {Placement & {
 *   proves: (bytes: NodeJS.ReadableStream, out: import('node:fs/promises').FileHandle) => Promise<boolean> }} at
 * @param {Stats} stats
 * @returns {Promise<Taken | null>}
 */
export async function takeVariantStreamed(store, from, key, at, stats) {
  const stored = await store.getStream(key, { below: at.keepBelow, touchOlderThan: from.markedSince });
  const decided = byRecord(stored, (stored?.stream ?? null) !== null, at);
  if (decided !== undefined) {
    stored?.stream?.destroy();
    return decided;
  }
  const { stream, size, encodeMs } = /** @type {import('./variant-store.js').StoredStream & {
    stream: import('node:stream').Readable }} */ (stored);
  let proven = false;
  try {
    const prove = async (/** @type {import('node:fs/promises').FileHandle} */ out) =>
      (proven = await at.proves(stream, out).catch(() => false));
    const written = await writeAtomicWith(at.target, prove, { mtime: at.mtime, checkParent: true });
    if (!proven) return reject(store, key, stats);
    return written ? { kept: size, encodeMs } : null;
  } catch {
    return proven ? null : reject(store, key, stats); // an output that cannot be written: as above
  } finally {
    stream.destroy();
  }
}
