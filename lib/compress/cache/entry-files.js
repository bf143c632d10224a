import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { READ_NOFOLLOW, isRealFolder, notRealFolder, tempPathFor, writeAtomicSync } from '../../fs-atomic.js';
import { sha256 } from '../../manifest/manifest.js';

/**
 * The variant cache's entry files (docs/cache.md): content-addressed compressed bytes with a record,
 * each proven by decoding before use (take.js), as the record only catches damage.
 */

const MAGIC = Buffer.from('PCCACHE1');
const TAIL = 12; // record length (4) + MAGIC (8)
const SCHEMA = 1;
/** Names in the cache folder: entries `<2 hex>/<64 hex>`, and the last run's record. */
export const ENTRY_NAME = /^[0-9a-f]{64}$/;
export const SHARD_NAME = /^[0-9a-f]{2}$/;
export const LAST_RUN = 'last-run.json';

const require = createRequire(import.meta.url);
/** @param {string} name */
function packageVersion(name) {
  try {
    return require(`${name}/package.json`).version;
  } catch {
    return null;
  }
}

/** What the encoders' output depends on besides their parameters: their versions. */
const ENCODERS = Object.freeze({
  precompressor: JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version,
  zlib: process.versions.zlib ?? null,
  brotli: process.versions.brotli ?? null,
  zstd: process.versions.zstd ?? null,
  wasmZstd: packageVersion('@hpcc-js/wasm-zstd'),
  zopfli: packageVersion('@gfx/zopfli'),
});

const KEY_HEAD = `${JSON.stringify([SCHEMA, ENCODERS]).slice(0, -1)},`;

/**
 * The key of a variant (or a delta): hex SHA-256 over the schema, the encoders' versions and `parts`.
 * @param {string} kind 'variant' or a delta encoding
 * @param {string} sourceHash content hash of the source (contentHash())
 * @param {unknown} params the encoder's parameters for this source (JSON-serializable)
 */
export function cacheKey(kind, sourceHash, params) {
  // The same bytes as JSON.stringify([SCHEMA, ENCODERS, kind, sourceHash, params]), the constant head serialised once.
  const tail = JSON.stringify([kind, sourceHash, params]).slice(1);
  return sha256(KEY_HEAD + tail, 'hex');
}

/** The file of the entry of `key` in the folder `dir`. */
export const entryPath = (/** @type {string} */ dir, /** @type {string} */ key) => path.join(dir, key.slice(0, 2), key);

/**
 * @typedef {{ key: string, size: number, bytes: number, sha256: string | null, encodeMs: number }} EntryRecord
 *   size: the compressed size; bytes: how many of them are stored (0 when the output was not
 *   smaller than the source: then the entry only says so)
 * @typedef {EntryRecord & { file: string }} Entry
 */

/** Entries up to this size are read whole by the lookup: one read for the record and the bytes. */
const READ_WHOLE = 64 * 1024;

/**
 * @param {number} fd
 * @param {number} n
 * @param {number} pos
 */
export function preadSync(fd, n, pos) {
  const buf = Buffer.allocUnsafe(n);
  let got = 0;
  for (let r; got < n; got += r) {
    r = fs.readSync(fd, buf, got, n - got, pos + got);
    if (r === 0) break;
  }
  return got === n ? buf : buf.subarray(0, got);
}

/**
 * The record of an entry file open on `fd`, or null when it is not a whole entry.
 * @param {number} fd
 * @param {number} fileSize
 * @param {string} key
 * @param {Buffer | null} [whole] the file's content, when already read
 */
function readRecord(fd, fileSize, key, whole = null) {
  if (fileSize < TAIL || (whole !== null && whole.length !== fileSize)) return null;
  /** @type {(n: number, pos: number) => Buffer} */
  const at = (n, pos) => (whole === null ? preadSync(fd, n, pos) : whole.subarray(pos, pos + n));
  const tail = at(TAIL, fileSize - TAIL);
  if (tail.length !== TAIL || !tail.subarray(4).equals(MAGIC)) return null;
  const len = tail.readUInt32BE(0);
  if (len > fileSize - TAIL) return null;
  const rec = JSON.parse(at(len, fileSize - TAIL - len).toString('utf8'));
  const ok = rec?.key === key && Number.isSafeInteger(rec.bytes) && rec.bytes + len + TAIL === fileSize &&
    Number.isSafeInteger(rec.size) && (rec.bytes === 0 || rec.bytes === rec.size) && typeof rec.encodeMs === 'number';
  return ok ? rec : null;
}

/**
 * Is the shard folder of `file` a real folder, not a symlink that would take a path operation outside
 * the cache? Not checked before a read: what is read is only bytes, proven before any use.
 * @param {string} file
 */
function inRealShard(file) {
  return isRealFolder(path.dirname(file));
}

/**
 * Remove a damaged entry or a temp file (best effort), unless its shard folder is a symlink now.
 * @param {string} file
 */
export function discard(file) {
  try {
    if (inRealShard(file)) fs.rmSync(file, { force: true });
  } catch {
    // left for the next run to find damaged again
  }
}

/**
 * The entry of `key` open for reading, or null (none, not whole, not a regular file: a FIFO planted as
 * an entry cannot block the build). A small entry comes with its bytes. The caller closes `fd`.
 * @param {string} dir
 * @param {string} key
 * @returns {(Entry & { fd: number, data?: Buffer, mtimeMs: number }) | null}
 */
export function openEntrySync(dir, key) {
  const file = entryPath(dir, key);
  let fd;
  try {
    fd = fs.openSync(file, READ_NOFOLLOW);
  } catch {
    return null;
  }
  let rec = null;
  let whole = null;
  let mtimeMs = 0;
  try {
    const st = fs.fstatSync(fd);
    mtimeMs = st.mtimeMs;
    whole = st.isFile() && st.size <= READ_WHOLE ? preadSync(fd, st.size, 0) : null;
    if (st.isFile()) rec = readRecord(fd, st.size, key, whole);
  } catch {
    rec = null;
  }
  if (rec !== null) {
    return { ...rec, file, fd, mtimeMs, ...(whole === null ? {} : { data: whole.subarray(0, rec.bytes) }) };
  }
  fs.closeSync(fd);
  discard(file);
  return null;
}

/**
 * The record of `file` if it is a whole entry whose key is `name`: what `cache prune` and `clear` may remove.
 * @param {string} file
 * @param {string} name
 * @returns {EntryRecord | null}
 */
export function entryRecordAt(file, name) {
  let fd;
  try {
    fd = fs.openSync(file, READ_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    return st.isFile() ? readRecord(fd, st.size, name) : null;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * @param {string} dir
 * @param {string} key
 * @returns {Entry | null}
 */
export function lookupSync(dir, key) {
  const e = openEntrySync(dir, key);
  if (e === null) return null;
  fs.closeSync(e.fd);
  return { key: e.key, size: e.size, bytes: e.bytes, sha256: e.sha256, encodeMs: e.encodeMs, file: e.file };
}

/**
 * Mark an entry as just used (its mtime orders eviction): through `fd`, else (Windows) by its path
 * without following a symlink. A read-only cache is still used.
 * @param {string} file
 * @param {number} [fd]
 */
export function touch(file, fd) {
  const now = new Date();
  try {
    if (!inRealShard(file)) return;
    if (fd !== undefined && trySync(() => fs.futimesSync(fd, now, now))) return;
    fs.lutimesSync(file, now, now);
  } catch {
    // read-only cache: eviction order is then the order of writing
  }
}

/**
 * @param {() => void} fn
 */
function trySync(fn) {
  try {
    fn();
    return true;
  } catch {
    return false;
  }
}

/**
 * An entry's bytes in memory (small outputs such as deltas); null (the entry removed) unless they match its record.
 * @param {Entry} entry
 */
export function readBytesSync(entry) {
  let data;
  try {
    const fd = fs.openSync(entry.file, READ_NOFOLLOW);
    try {
      data = Buffer.alloc(entry.bytes);
      if (!fs.fstatSync(fd).isFile() || fs.readSync(fd, data, 0, entry.bytes, 0) !== entry.bytes) data = null;
      if (data !== null && sha256(data, 'hex') === entry.sha256) touch(entry.file, fd);
      else data = null;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    data = null;
  }
  if (data === null) discard(entry.file);
  return data;
}

/**
 * @param {string} key
 * @param {Buffer | null} data
 * @param {number} size
 * @param {number} encodeMs
 */
function entryContent(key, data, size, encodeMs) {
  /** @type {EntryRecord} */
  const rec = {
    key, size, bytes: data === null ? 0 : data.length, sha256: data === null ? null : sha256(data, 'hex'), encodeMs,
  };
  return data === null ? trailer(rec) : Buffer.concat([data, trailer(rec)]);
}

/**
 * What follows an entry's bytes: its record as JSON, then the JSON's length and the magic.
 * @param {EntryRecord} rec
 */
function trailer(rec) {
  const json = Buffer.from(JSON.stringify({ ...rec, encodeMs: Math.round(rec.encodeMs * 1000) / 1000 }));
  const tail = Buffer.alloc(TAIL);
  tail.writeUInt32BE(json.length, 0);
  MAGIC.copy(tail, 4);
  return Buffer.concat([json, tail]);
}

/**
 * Add an entry, atomically (a concurrent writer of the same key writes the same bytes). `data` null:
 * the output was not smaller.
 * @param {string} dir
 * @param {string} key
 * @param {Buffer | null} data
 * @param {{ size: number, encodeMs: number }} info
 * @returns {number} bytes written
 */
export function storeSync(dir, key, data, info) {
  const file = entryPath(dir, key);
  const content = entryContent(key, data, info.size, info.encodeMs);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!inRealShard(file)) throw symlinkedShard(file);
  writeAtomicSync(file, content);
  return content.length;
}

/**
 * Add a variant made by streaming, from the file `variant`, unless its bytes are no longer `made`
 * (replaced by another writer): no entry holds bytes of another source.
 * @param {string} dir
 * @param {string} key
 * @param {string} variant
 * @param {number} encodeMs
 * @param {{ size: number, sha256: string }} made
 */
export async function storeFile(dir, key, variant, encodeMs, made) {
  const file = entryPath(dir, key);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  if (!inRealShard(file)) throw symlinkedShard(file);
  const tmp = tempPathFor(file);
  try {
    await fsp.copyFile(variant, tmp, fs.constants.COPYFILE_FICLONE);
    const hash = crypto.createHash('sha256');
    let size = 0;
    for await (const chunk of fs.createReadStream(tmp)) {
      hash.update(chunk);
      size += chunk.length;
    }
    const sha256 = hash.digest('hex');
    if (size !== made.size || sha256 !== made.sha256) {
      await fsp.rm(tmp, { force: true });
      return;
    }
    await fsp.appendFile(tmp, trailer({ key, size, bytes: size, sha256, encodeMs }));
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/** @param {string} file */
function symlinkedShard(file) {
  return notRealFolder(path.dirname(file));
}

/** Per-task cache counters, filled where the task runs and returned with its result. */
export function taskStats() {
  return { hits: 0, misses: 0, rejected: 0, written: 0, cpuSavedMs: 0, error: /** @type {string | null} */ (null) };
}
