import fs from 'node:fs';
import { discard, entryPath, openEntrySync, preadSync, storeFile, storeSync, touch } from './entry-files.js';

/**
 * The variant store in a local folder, in the entry files of lib/compress/cache/entry-files.js. Its I/O is
 * synchronous behind the async interface (lib/compress/cache/variant-store.js): the workers would only
 * wait for it, and a rebuild's main thread takes thousands of small entries, each cheaper than a
 * hop to libuv's pool. An entry is read, and marked used, through the one descriptor it was opened with.
 */

// The types of the interface are spelled out here: lib/compress/cache/variant-store.js makes this store
// and checks it against them, and a module it imports cannot import it back.
/**
 * @typedef {{ below?: number, touchOlderThan?: number }} GetOptions
 * @typedef {{ size: number, encodeMs: number, sha256: string | null }} EntryInfo
 */

export class FolderStore {
  /** @param {string} dir */
  constructor(dir) {
    this.dir = dir;
    this.descriptor = Object.freeze({ kind: /** @type {const} */ ('folder'), dir });
  }

  /**
   * The entry of `key` open, with whether its bytes are wanted, marked used when `how` says; null
   * when there is none (a damaged one is removed by openEntrySync()).
   * @param {string} key
   * @param {GetOptions} how
   */
  open(key, how) {
    const entry = openEntrySync(this.dir, key);
    if (entry === null) return null;
    const below = how.below ?? Infinity;
    const wanted = entry.bytes > 0 && entry.size < below;
    // A record without bytes that the caller would keep is a miss for it: encoded again, not used.
    if ((wanted || entry.size >= below) && !(entry.mtimeMs >= (how.touchOlderThan ?? Infinity))) {
      touch(entry.file, entry.fd);
    }
    return { entry, wanted };
  }

  /**
   * @param {string} key
   * @param {GetOptions} [how]
   * @returns {Promise<EntryInfo & { bytes: Buffer | null } | null>}
   */
  async get(key, how = {}) {
    const o = this.open(key, how);
    if (o === null) return null;
    const { entry } = o;
    try {
      const bytes = o.wanted ? entry.data ?? preadSync(entry.fd, entry.size, 0) : null;
      if (bytes !== null && bytes.length !== entry.size) {
        discard(entry.file); // cut short since its record was read
        return null;
      }
      return { size: entry.size, encodeMs: entry.encodeMs, sha256: entry.sha256, bytes };
    } catch {
      return null;
    } finally {
      fs.closeSync(entry.fd);
    }
  }

  /**
   * @param {string} key
   * @param {GetOptions} [how]
   * @returns {Promise<EntryInfo & { stream: import('node:stream').Readable | null } | null>}
   */
  async getStream(key, how = {}) {
    const o = this.open(key, how);
    if (o === null) return null;
    const { entry } = o;
    const stored = { size: entry.size, encodeMs: entry.encodeMs, sha256: entry.sha256 };
    if (!o.wanted) {
      fs.closeSync(entry.fd);
      return { ...stored, stream: null };
    }
    // The stream owns the descriptor: closed when it ends or is destroyed.
    const stream = fs.createReadStream('', { fd: entry.fd, start: 0, end: entry.size - 1, highWaterMark: 1 << 20 });
    return { ...stored, stream };
  }

  /**
   * @param {string} key
   * @param {Buffer | null} bytes
   * @param {{ size: number, encodeMs: number }} info
   */
  async put(key, bytes, info) {
    return storeSync(this.dir, key, bytes, info);
  }

  /**
   * @param {string} key
   * @param {string} file
   * @param {{ size: number, sha256: string, encodeMs: number }} made
   */
  async putFile(key, file, made) {
    await storeFile(this.dir, key, file, made.encodeMs, made);
  }

  /** @param {string} key */
  async evict(key) {
    discard(entryPath(this.dir, key));
  }
}
