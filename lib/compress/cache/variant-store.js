import { FolderStore } from './folder-store.js';

/**
 * Where the variant cache keeps its entries: an async store interface, with the local folder as one
 * store. A task names its store by a descriptor (plain data, sent to a worker with the task); each
 * thread makes the store once from it. Taking an entry (proving that it decodes to its source,
 * writing it out) stays with the caller, lib/compress/cache/take.js: a store only moves bytes.
 */

/**
 * @typedef {{ kind: 'folder', dir: string }} StoreDescriptor the store of a pass, as data a worker can be sent
 * @typedef {{ below?: number, touchOlderThan?: number }} GetOptions
 *   below: the bytes are wanted only when the output is smaller than this (else only the record);
 *   touchOlderThan: an entry last used before this time (ms) is marked used now (eviction order)
 * @typedef {{ size: number, encodeMs: number, sha256: string | null, bytes: Buffer | null }} Stored
 *   size: the encoder's output size; bytes: that output, or null when the entry holds none (it was
 *   not smaller than its source) or it is not below `below`; sha256: of the bytes, as recorded (hex)
 * @typedef {Omit<Stored, 'bytes'> & { stream: import('node:stream').Readable | null }} StoredStream
 *   the same with the bytes as a stream, which the caller destroys when it does not read it to the end
 * @typedef {object} VariantStore
 * @property {StoreDescriptor} descriptor
 * @property {(key: string, how?: GetOptions) => Promise<Stored | null>} get null: no entry (or a damaged one)
 * @property {(key: string, how?: GetOptions) => Promise<StoredStream | null>} getStream for outputs too big to hold
 * @property {(key: string, bytes: Buffer | null, info: { size: number, encodeMs: number }) => Promise<number>} put
 *   add an entry (`bytes` null: the output, of `size` bytes, was not smaller than its source); resolves to
 *   the bytes the store took
 * @property {(key: string, file: string, made: { size: number, sha256: string, encodeMs: number }) => Promise<void>}
 *   putFile add an entry whose bytes are in `file`, unless they are no longer `made` (another writer's)
 * @property {(key: string) => Promise<void>} evict remove an entry that did not prove to be what its key says
 */

/** Each kind of store, made from its descriptor. */
const KINDS = {
  folder: (/** @type {StoreDescriptor} */ d) => new FolderStore(d.dir),
};

/** @type {Map<string, VariantStore>} this thread's stores, by descriptor */
const made = new Map();

/**
 * The store a descriptor names, made once per thread.
 * @param {StoreDescriptor} descriptor
 * @returns {VariantStore}
 */
export function storeOf(descriptor) {
  const id = JSON.stringify(descriptor);
  let store = made.get(id);
  if (store === undefined) {
    const make = KINDS[descriptor.kind];
    if (make === undefined) throw new Error(`Unknown variant store ${descriptor.kind}`);
    made.set(id, (store = make(descriptor)));
  }
  return store;
}

/**
 * The store of a pass's options: the cache folder.
 * @param {{ cacheDir: string }} opts
 * @returns {StoreDescriptor}
 */
export function storeDescriptor(opts) {
  return { kind: 'folder', dir: opts.cacheDir };
}
