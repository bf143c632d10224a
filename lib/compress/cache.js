import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { threadId } from 'node:worker_threads';
import { tempPathFor, writeAtomicSync } from '../fs-atomic.js';

/**
 * The variant cache: compressed bytes kept outside the output folder, content-addressed, so that a
 * build that starts from an empty output (a bundler that empties it, a CI checkout, another
 * machine) copies each variant it made before instead of encoding it again. Shared by every entry
 * point (the CLI, precompress(), watch mode, the Vite plugin) through the pass.
 *
 * - **Key**: SHA-256 of the source's content hash, the encoding, the encoder's parameters for that
 *   file (zlibOptions(): quality, level, mode, window, zopfli, zstd level) and the encoders'
 *   versions (Node's zlib, Brotli and zstd, the WebAssembly packages, this package). Never a path.
 *   minRatio is not in it: an entry holds the bytes whenever they are smaller than the source, and
 *   each run applies its own minRatio.
 * - **Entry** `<dir>/<2 hex>/<64 hex key>`: the compressed bytes, then a trailer: a JSON record
 *   (key, size, SHA-256 of the bytes, encode time), its length (4 bytes) and MAGIC. One file,
 *   written to a temp file beside it and renamed: a reader sees a whole entry or none.
 * - **Use**: the record is read and checked (magic, lengths, key), and the bytes must decode to
 *   exactly the source's bytes before they reach the output. A buffered file's entry is read
 *   whole in one read, decoded in memory and written as a fresh variant is (writeAtomicSync()); a
 *   streamed file's is copied (copy-on-write where the file system can) to a temp file, cut to the
 *   bytes, decoded as a stream, and the temp renamed into place. The record's own
 *   size and SHA-256 only catch damage: whoever can write the folder can recompute them, so only
 *   the decode proves a variant. Anything that fails is removed from the cache and the variant is
 *   encoded again: neither a damaged nor a rewritten entry reaches the output.
 * - **Bounded**: a hit sets the entry's mtime (least recently used = oldest mtime); after a run
 *   that wrote entries, the oldest are removed until the cache fits `cacheMaxSize`
 *   (lib/compress/cache-run.js: a pass's counters, eviction, info, prune, clear).
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
  precompressor: JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
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
  return crypto.createHash('sha256').update(KEY_HEAD).update(JSON.stringify([kind, sourceHash, params]).slice(1)).digest('hex');
}

const sha256 = (/** @type {string | NodeJS.ArrayBufferView} */ buf) => crypto.createHash('sha256').update(buf).digest('hex');
const entryPath = (/** @type {string} */ dir, /** @type {string} */ key) => path.join(dir, key.slice(0, 2), key);

/**
 * @typedef {{ key: string, size: number, bytes: number, sha256: string | null, encodeMs: number }} EntryRecord
 *   size: the compressed size; bytes: how many of them are stored (0 when the output was not
 *   smaller than the source: then the entry only says so)
 * @typedef {EntryRecord & { file: string }} Entry
 */

/**
 * The record in an entry's last bytes (`fileSize` long in all), read by `readAt(buffer, position)`;
 * null when it is not a whole entry of `key`.
 * @param {(buf: Buffer, position: number) => void} readAt
 * @param {number} fileSize
 * @param {string} key
 */
function parseRecord(readAt, fileSize, key) {
  if (fileSize < TAIL) return null;
  const tail = Buffer.alloc(TAIL);
  readAt(tail, fileSize - TAIL);
  if (!tail.subarray(4).equals(MAGIC)) return null;
  const len = tail.readUInt32BE(0);
  if (len > fileSize - TAIL) return null;
  const json = Buffer.alloc(len);
  readAt(json, fileSize - TAIL - len);
  const rec = JSON.parse(json.toString('utf8'));
  const whole = rec?.key === key && Number.isSafeInteger(rec.bytes) && rec.bytes + len + TAIL === fileSize &&
    Number.isSafeInteger(rec.size) && (rec.bytes === 0 || rec.bytes === rec.size) && typeof rec.encodeMs === 'number';
  return whole ? rec : null;
}

/**
 * The record of an entry file open on `fd`, or null when it is not a whole entry.
 * @param {number} fd
 * @param {number} fileSize
 * @param {string} key
 */
function readRecord(fd, fileSize, key) {
  return parseRecord((buf, at) => fs.readSync(fd, buf, 0, buf.length, at), fileSize, key);
}

/**
 * Remove a damaged entry or a temp file (best effort: another run may have replaced or removed it).
 * @param {string} file
 */
function discard(file) {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // left for the next run to find damaged again
  }
}

/**
 * The entry of `key`, or null: none, or not a whole one (then it is removed).
 * @param {string} dir
 * @param {string} key
 * @returns {Entry | null}
 */
export function lookupSync(dir, key) {
  const file = entryPath(dir, key);
  let fd;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  let rec;
  try {
    rec = readRecord(fd, fs.fstatSync(fd).size, key);
  } catch {
    rec = null;
  } finally {
    fs.closeSync(fd);
  }
  if (rec === null) discard(file);
  return rec === null ? null : { ...rec, file };
}

/**
 * Mark an entry as just used (its mtime orders eviction); a read-only cache is still used.
 * @param {string} file
 */
function touch(file) {
  const now = new Date();
  try {
    fs.utimesSync(file, now, now);
  } catch {
    // read-only cache: eviction order is then the order of writing
  }
}

let copies = 0;

/**
 * An entry's bytes copied (copy-on-write where the file system has it) to a temp file for
 * `at.target`, cut to them; null when the copy fails (an entry evicted meanwhile).
 * @param {Entry} entry
 * @param {Placement} at
 */
function copyToTempSync(entry, at) {
  const tmp = at.tempDir ? path.join(at.tempDir, `c${threadId}-${copies++}`) : tempPathFor(at.target);
  try {
    fs.copyFileSync(entry.file, tmp, fs.constants.COPYFILE_FICLONE);
    fs.truncateSync(tmp, entry.size);
    return tmp;
  } catch {
    discard(tmp);
    return null;
  }
}

/**
 * Rename the temp `tmp` over `at.target`, with the source's mtime; through a temp beside the
 * target when the run's temp folder is on another file system (a mount inside the tree).
 * @param {string} tmp
 * @param {Placement} at
 */
function placeSync(tmp, at) {
  fs.utimesSync(tmp, at.mtime, at.mtime);
  try {
    fs.renameSync(tmp, at.target);
  } catch (err) {
    if (/** @type {any} */ (err).code !== 'EXDEV') throw err;
    const near = tempPathFor(at.target);
    try {
      fs.copyFileSync(tmp, near);
      fs.utimesSync(near, at.mtime, at.mtime);
      fs.renameSync(near, at.target);
    } finally {
      discard(near);
      discard(tmp);
    }
  }
}

/**
 * @typedef {{ target: string, keepBelow: number, mtime: Date, tempDir?: string | null }} Placement
 *   tempDir: a folder on the target's file system for the copy
 * @typedef {{ kept: number | null, encodeMs: number }} Taken kept: the variant's size, or null when not kept
 * @typedef {{ entry: Entry, tmp: string } | { taken: Taken } | null} Started
 */

/**
 * The record says the output is not small enough: nothing of the entry reaches the output.
 * @param {Entry} entry
 * @param {Placement} at
 * @returns {Taken}
 */
function notKept(entry, at) {
  fs.rmSync(at.target, { force: true });
  touch(entry.file);
  return { kept: null, encodeMs: entry.encodeMs };
}

/**
 * The first half of taking a variant: look it up; when it is to be kept, copy its bytes to a temp
 * file that the caller proves (it decodes to the source) before finishTake() renames it.
 * @param {string} dir
 * @param {string} key
 * @param {Placement} at
 * @returns {Started}
 */
function startTake(dir, key, at) {
  const entry = lookupSync(dir, key);
  if (entry === null) return null;
  if (entry.size >= at.keepBelow) return { taken: notKept(entry, at) };
  if (entry.bytes === 0) return null;
  const tmp = copyToTempSync(entry, at);
  return tmp === null ? null : { entry, tmp };
}

/**
 * The second half: a proven copy is renamed into place; an unproven one is dropped with its entry
 * (whoever wrote it, it is not a variant of this source) and counted in `stats.rejected`.
 * @param {{ entry: Entry, tmp: string }} s
 * @param {boolean} proven
 * @param {Placement} at
 * @param {ReturnType<typeof taskStats>} stats
 * @returns {Taken | null}
 */
function finishTake(s, proven, at, stats) {
  if (!proven) {
    discard(s.tmp);
    discard(s.entry.file);
    stats.rejected++;
    return null;
  }
  try {
    placeSync(s.tmp, at);
  } catch {
    // an output that cannot be written: the caller encodes instead, and meets and reports the error itself
    discard(s.tmp);
    return null;
  }
  touch(s.entry.file);
  return { kept: s.entry.size, encodeMs: s.entry.encodeMs };
}

/**
 * The entry of `key` read whole, in one read, with its record; null when there is none or it is
 * not a whole one (then it is removed). For entries of buffered files (small enough to hold).
 * @param {string} dir
 * @param {string} key
 * @returns {{ entry: Entry, bytes: Buffer } | null}
 */
function readWholeSync(dir, key) {
  const file = entryPath(dir, key);
  let whole;
  try {
    whole = fs.readFileSync(file);
  } catch {
    return null;
  }
  let rec;
  try {
    rec = parseRecord((buf, at) => whole.copy(buf, 0, at, at + buf.length), whole.length, key);
  } catch {
    rec = null;
  }
  if (rec === null) {
    discard(file);
    return null;
  }
  return { entry: { ...rec, file }, bytes: whole.subarray(0, rec.bytes) };
}

/**
 * Put the cached variant of `key` in place: written to `target` when smaller than `keepBelow`
 * bytes and `proves(bytes)` (they decode to the source), else `target` removed. Null on a miss
 * (nothing usable: encode it). The entry is read once into memory, proven there and written
 * through writeAtomicSync(), as a variant just encoded is: no copy of the entry, no truncate, no
 * read back.
 * @param {string} dir
 * @param {string} key
 * @param {Placement & { proves: (bytes: Buffer) => boolean }} at
 * @param {ReturnType<typeof taskStats>} stats
 * @returns {Taken | null}
 */
export function takeVariantSync(dir, key, at, stats) {
  const got = readWholeSync(dir, key);
  if (got === null) return null;
  const { entry, bytes } = got;
  if (entry.size >= at.keepBelow) return notKept(entry, at);
  if (entry.bytes === 0) return null;
  let proven;
  try {
    proven = at.proves(bytes);
  } catch {
    proven = false;
  }
  if (!proven) {
    discard(entry.file);
    stats.rejected++;
    return null;
  }
  try {
    writeAtomicSync(at.target, bytes, { mtime: at.mtime, tempDir: at.tempDir ?? undefined });
  } catch {
    return null; // an output that cannot be written: the caller encodes instead, and meets and reports the error itself
  }
  touch(entry.file);
  return { kept: entry.size, encodeMs: entry.encodeMs };
}

/**
 * takeVariantSync() with a proof that runs asynchronously (a streamed decode of a big variant).
 * @param {string} dir
 * @param {string} key
 * @param {Placement & { proves: (copy: string) => Promise<boolean> }} at
 * @param {ReturnType<typeof taskStats>} stats
 * @returns {Promise<Taken | null>}
 */
export async function takeVariant(dir, key, at, stats) {
  const s = startTake(dir, key, at);
  if (s === null || 'taken' in s) return s?.taken ?? null;
  const proven = await at.proves(s.tmp).catch(() => false);
  return finishTake(s, proven, at, stats);
}

/**
 * An entry's bytes in memory (small outputs such as deltas), checked; null (and the entry
 * removed) when they do not match its record.
 * @param {Entry} entry
 */
export function readBytesSync(entry) {
  let data;
  try {
    const fd = fs.openSync(entry.file, 'r');
    try {
      data = Buffer.alloc(entry.bytes);
      if (fs.readSync(fd, data, 0, entry.bytes, 0) !== entry.bytes) data = null;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    data = null;
  }
  if (data === null || sha256(data) !== entry.sha256) {
    discard(entry.file);
    return null;
  }
  touch(entry.file);
  return data;
}

/**
 * An entry file's content: the bytes (none when `data` is null) and the trailer.
 * @param {string} key
 * @param {Buffer | null} data
 * @param {number} size
 * @param {number} encodeMs
 */
function entryContent(key, data, size, encodeMs) {
  /** @type {EntryRecord} */
  const rec = { key, size, bytes: data === null ? 0 : data.length, sha256: data === null ? null : sha256(data), encodeMs };
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
 * Add an entry (atomically: temp file beside it, then rename; a concurrent writer of the same key
 * writes the same bytes). `data` null records that the output (of `size` bytes) was not smaller.
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
  writeAtomicSync(file, content);
  return content.length;
}

/**
 * Add a variant made by streaming (its bytes are in the file `variant`, not in memory). `made` is
 * what the encoder wrote: a copy whose bytes differ (the file replaced meanwhile by another
 * writer of the same output) is not stored, so no entry ever holds bytes of another source.
 * @param {string} dir
 * @param {string} key
 * @param {string} variant
 * @param {number} encodeMs
 * @param {{ size: number, sha256: string }} made
 */
export async function storeFile(dir, key, variant, encodeMs, made) {
  const file = entryPath(dir, key);
  await fsp.mkdir(path.dirname(file), { recursive: true });
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

/** Per-task cache counters, filled where the task runs and returned with its result. */
export function taskStats() {
  return { hits: 0, misses: 0, rejected: 0, written: 0, cpuSavedMs: 0, error: /** @type {string | null} */ (null) };
}
