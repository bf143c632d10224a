import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { PrecompressorError } from '../errors.js';
import { StringDecoder } from 'node:string_decoder';
import { writeAtomic } from '../fs-atomic.js';
import { DELTA_NAMES, isDeltaEncoding, isEncoding } from '../encodings.js';
import { ManifestLines } from './lines.js';

/**
 * Bump when the manifest's shape changes (docs/manifest.md): 2 added `dictionary` and `deltas`, 3
 * `siteDictionary`; 1 and 2 are still read.
 */
export const SCHEMA_VERSION = 3;
const READABLE_SCHEMAS = [1, 2, 3];

/**
 * @typedef {{ size: number }} VariantEntry
 * @typedef {{ hash: string, match: string, dest: string | null, hashed: boolean }} DictionaryEntry
 *   hash: SHA-256 of the identity bytes in standard base64, as `Available-Dictionary` carries it;
 *   match: URLPattern relative to the file's URL, for `Use-As-Dictionary`; dest: `match-dest` or null
 * @typedef {Partial<Record<import('../encodings.js').DeltaEncoding, { size: number, hash: string }>>} DeltaEntry
 * @typedef {{
 *   size: number,
 *   mtimeMs: number,
 *   hash: string,
 *   type?: string,
 *   variants: Partial<Record<import('../encodings.js').Encoding, VariantEntry>>,
 *   skipped?: 'excluded' | 'compressed-format' | 'not-smaller' | 'empty',
 *   hashed?: true,
 *   dictionary?: DictionaryEntry,
 *   deltas?: Record<string, DeltaEntry>,
 * }} FileEntry  serveStatic keeps only these fields of an entry
 *   (lib/serve/manifest-index/compact.js ENTRY, PLAIN_LINE):
 *   a field added here is added there
 * @typedef {{
 *   schema: number,
 *   tool: string,
 *   settings: { encodings: string[], brotliQuality: number, gzipLevel: number, zstdLevel: number, zopfli: boolean,
 *     minRatio: number },
 *   generatedAt: string,
 *   files: Record<string, FileEntry>,
 *   siteDictionary?: SiteDictionaryEntry,
 * }} Manifest
 * @typedef {{ path: string, hash: string }} SiteDictionaryEntry
 *   path: the dictionary file (listed in `files`); hash: its content hash (`sha256-<base64url>`)
 */

/**
 * The manifest's entry for `rel`: own keys only (a file named `__proto__` finds no prototype).
 * @param {Manifest | null} manifest
 * @param {string} rel
 * @returns {FileEntry | undefined}
 */
export function entryOf(manifest, rel) {
  return manifest !== null && Object.hasOwn(manifest.files, rel) ? manifest.files[rel] : undefined;
}

const MAX_DATE_MS = 8.64e15;
/** What Node refuses in a header value (its checkInvalidHeaderChar). */
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** C0 and C1 control characters, DEL included. */
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** An empty, `.` or `..` segment (a leading or trailing `/`, `//` included): one test, no segment list per path. */
const BAD_SEGMENT = /(?:^|\/)(?:\.{0,2})(?:\/|$)/;

/**
 * Why `rel` cannot be a file path of a manifest, or null (pure): one rule for the walk and the reader.
 * No control characters (a name could forge a log line or a header), valid Unicode (else it reads back
 * with U+FFFD and would not open).
 * @param {string} rel
 * @returns {string | null}
 */
export function pathProblem(rel) {
  if (rel === '' || BAD_SEGMENT.test(rel)) return 'is not a relative POSIX path inside the folder';
  if (rel.includes('\\')) return 'contains a backslash';
  if (CONTROL.test(rel)) return 'contains a control character';
  if (LONE_SURROGATE.test(rel) || rel.includes('\ufffd')) return 'is not valid UTF-8';
  return null;
}

/**
 * @param {string} file
 * @param {string} why
 */
function bad(file, why) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `Invalid manifest ${file}: ${why}`, { path: file });
}

/**
 * @param {string} file
 * @param {string} why
 */
export function invalidManifest(file, why) {
  return bad(file, why);
}

/**
 * Check that `data` has the documented shape. Throws a PrecompressorError naming the first problem.
 * @param {unknown} data
 * @param {string} [file] for messages
 * @returns {Manifest}
 */
export function validateManifest(data, file = 'manifest') {
  const m = validateHead(data, file);
  for (const rel in m.files) {
    if (!Object.hasOwn(m.files, rel)) continue;
    const why = entryProblem(rel, m.files[rel], m.schema);
    if (why !== null) throw bad(file, why);
  }
  if (m.siteDictionary !== undefined && !siteDictionaryOk(m.siteDictionary, entryOf(m, m.siteDictionary?.path)?.hash)) {
    throw bad(file, SITE_DICTIONARY_PROBLEM);
  }
  return m;
}

const SITE_DICTIONARY_PROBLEM = 'siteDictionary is not { path, hash } of a listed file';

/**
 * Throw unless the manifest's site dictionary, if any, names a listed file whose hash is its own.
 * @param {Manifest} m the head
 * @param {string | undefined} listedHash the hash of the entry at `m.siteDictionary.path`, validated
 * @param {string} file
 */
export function validateSiteDictionary(m, listedHash, file) {
  const sd = m.siteDictionary;
  if (sd !== undefined && !siteDictionaryOk(sd, listedHash)) throw bad(file, SITE_DICTIONARY_PROBLEM);
}

/**
 * The top level of a manifest: an object of a readable schema with a `files` object.
 * @param {unknown} data
 * @param {string} file
 * @returns {Manifest}
 */
export function validateHead(data, file) {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad(file, 'not a JSON object');
  const m = /** @type {any} */ (data);
  if (!READABLE_SCHEMAS.includes(m.schema)) {
    throw bad(file, `schema ${JSON.stringify(m.schema)} is not one of ${READABLE_SCHEMAS.join(', ')}`);
  }
  if (m.files === null || typeof m.files !== 'object' || Array.isArray(m.files)) {
    throw bad(file, '"files" is not an object');
  }
  return m;
}

/**
 * Is `sd` a site dictionary record naming a listed file whose hash (`listedHash`) is its own?
 * @param {any} sd
 * @param {string | undefined} listedHash
 */
function siteDictionaryOk(sd, listedHash) {
  return sd !== null && typeof sd === 'object' && typeof sd.path === 'string' && typeof sd.hash === 'string' &&
    listedHash === sd.hash;
}

/**
 * What is wrong with one file entry, or null (the server validates each entry when its path is
 * first asked for, lib/serve/manifest-index/manifest-index.js).
 * @param {string} rel
 * @param {any} e as parsed
 * @param {number} schema
 */
export function entryProblem(rel, e, schema) {
  const problem = pathProblem(rel);
  if (problem !== null) return `file path ${JSON.stringify(rel)} ${problem}`;
  if (e === null || typeof e !== 'object') return `entry ${JSON.stringify(rel)} is not an object`;
  if (!Number.isSafeInteger(e.size) || e.size < 0) return `entry ${JSON.stringify(rel)} has no valid size`;
  // a Date holds ±8.64e15 ms; beyond it Last-Modified would read "Invalid Date"
  if (typeof e.mtimeMs !== 'number' || !(Math.abs(e.mtimeMs) <= MAX_DATE_MS)) {
    return `entry ${JSON.stringify(rel)} has no valid mtimeMs`;
  }
  if (typeof e.hash !== 'string') return `entry ${JSON.stringify(rel)} has no hash`;
  // sent as Content-Type: a CR, LF or other byte Node refuses in a header would turn every request into a 500
  if (e.type !== undefined && (typeof e.type !== 'string' || INVALID_HEADER_CHAR.test(e.type))) {
    return `entry ${JSON.stringify(rel)} has an invalid type ${JSON.stringify(e.type)}`;
  }
  if (e.variants === null || typeof e.variants !== 'object') {
    return `entry ${JSON.stringify(rel)} has no variants object`;
  }
  for (const enc in e.variants) {
    if (!Object.hasOwn(e.variants, enc)) continue;
    const v = e.variants[enc];
    if (!isEncoding(enc)) return `entry ${JSON.stringify(rel)} has unknown encoding ${JSON.stringify(enc)}`;
    if (v === null || typeof v !== 'object' || !Number.isSafeInteger(v.size) || v.size < 0) {
      return `entry ${JSON.stringify(rel)} variant ${enc} has no valid size`;
    }
  }
  if (e.hashed !== undefined && e.hashed !== true) return `entry ${JSON.stringify(rel)} has an invalid hashed`;
  if (e.dictionary === undefined && e.deltas === undefined) return null;
  const why = dictionaryProblem(e, schema);
  return why === null ? null : `entry ${JSON.stringify(rel)} ${why}`;
}

const B64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/**
 * What is wrong with an entry's `dictionary` and `deltas`, or null (before schema 3, deltas need a dictionary).
 * @param {any} e an entry as parsed, not yet validated
 * @param {number} schema
 */
function dictionaryProblem(e, schema) {
  if (e.dictionary !== undefined) {
    const d = e.dictionary;
    if (d === null || typeof d !== 'object' || typeof d.hash !== 'string' || !B64_SHA256.test(d.hash) ||
      typeof d.match !== 'string' || d.match === '' || !(d.dest === null || typeof d.dest === 'string') ||
      // both go into Use-As-Dictionary: a byte Node refuses in a header would make each request a 500
      INVALID_HEADER_CHAR.test(d.match) || (d.dest !== null && INVALID_HEADER_CHAR.test(d.dest)) ||
      typeof d.hashed !== 'boolean') {
      return 'has an invalid dictionary';
    }
  }
  if (e.deltas === undefined) return null;
  if (e.deltas === null || typeof e.deltas !== 'object' || (schema < 3 && e.dictionary === undefined)) {
    return 'has deltas but no dictionary';
  }
  for (const [dict, byEnc] of Object.entries(e.deltas)) {
    if (!B64_SHA256.test(dict) || byEnc === null || typeof byEnc !== 'object') {
      return `has an invalid delta key ${JSON.stringify(dict)}`;
    }
    for (const [enc, v] of Object.entries(byEnc)) {
      if (!isDeltaEncoding(enc) || v === null || typeof v !== 'object' ||
        !Number.isSafeInteger(v.size) || v.size < 1 || typeof v.hash !== 'string') {
        return `has an invalid ${JSON.stringify(enc)} delta`;
      }
    }
  }
  return null;
}

/**
 * Path of the delta of `rel` against the dictionary whose SHA-256 is `dictHash`.
 * @param {string} rel
 * @param {string} dictHash
 * @param {import('../encodings.js').DeltaEncoding} encoding
 */
export function deltaPath(rel, dictHash, encoding) {
  return `${rel}.${Buffer.from(dictHash, 'base64').toString('hex').slice(0, 16)}.${encoding}`;
}

/**
 * Path of the site dictionary whose content hash is `hash`, at the root.
 * @param {string} hash
 */
export function siteDictionaryPath(hash) {
  const hex = Buffer.from(hash.replace(/^sha256-/, ''), 'base64url').toString('hex');
  return `precompressor-dictionary.${hex.slice(0, 16)}.dict`;
}

/**
 * The manifest's site dictionary record when its path is the one a run writes for its hash: only
 * such a file is a run's to keep or remove (not a page a record names).
 * @param {Pick<Manifest, 'siteDictionary'> | null | undefined} m
 * @returns {SiteDictionaryEntry | undefined}
 */
export function ownSiteDictionary(m) {
  const sd = m?.siteDictionary;
  return typeof sd?.hash === 'string' && sd.path === siteDictionaryPath(sd.hash) ? sd : undefined;
}

const DELTA_NAME = new RegExp(`^(.+)\\.[0-9a-f]{16}\\.(?:${DELTA_NAMES.join('|')})$`);

/**
 * The file a delta path belongs to (`a.js` for `a.js.0123456789abcdef.dcz`), or null.
 * @param {string} rel
 */
export function deltaStem(rel) {
  const m = DELTA_NAME.exec(rel);
  return m === null ? null : m[1];
}

/**
 * Every delta file an entry records, as [dictionary hash, encoding, path].
 * @param {string} rel
 * @param {FileEntry | undefined} entry
 */
export function deltasOf(rel, entry) {
  /** @type {[string, import('../encodings.js').DeltaEncoding, string][]} */
  const out = [];
  for (const [dict, byEnc] of Object.entries(entry?.deltas ?? {})) {
    for (const enc of DELTA_NAMES) if (byEnc[enc]) out.push([dict, enc, deltaPath(rel, dict, enc)]);
  }
  return out;
}

/**
 * Parse and validate the text of a manifest file.
 * @param {string} text
 * @param {string} file
 */
export function parseManifest(text, file) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw bad(file, `not valid JSON (${/** @type {Error} */ (err).message})`);
  }
  return validateManifest(data, file);
}

/**
 * The largest manifest read by default, in bytes: a site of a million files fits (about 180 bytes per
 * entry); `maxManifestBytes` raises it, up to V8's longest string.
 */
export const MAX_MANIFEST_BYTES = 400 * 1024 * 1024;

// O_NONBLOCK: opening a FIFO planted at the manifest's path must not wait for a writer.
const READ_FLAGS = fsSync.constants.O_RDONLY | (fsSync.constants.O_NONBLOCK ?? 0);

/**
 * @param {string} file
 * @param {unknown} err
 */
function unreadable(file, err) {
  // missing: no such file, a path through a file (a root that is a file has no manifest), or a
  // path too long for the OS (express.static treats such a root as empty too)
  if (['ENOENT', 'ENOTDIR', 'ENAMETOOLONG'].includes(/** @type {any} */ (err).code)) return null;
  if (err instanceof PrecompressorError) throw err;
  const message = `Cannot read manifest ${file}: ${/** @type {Error} */ (err).message}`;
  throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', message, { path: file, cause: err });
}

/**
 * @template T
 * @typedef {(head: Manifest) => { add(rel: string, entry: FileEntry): void, done(): T }} Collector
 *   what a reader does with a manifest: `head` has every top-level field (`files` empty), then each
 *   validated entry is added, then `done()` gives the result
 */

/** @type {Collector<Manifest>} the whole manifest as one object */
function wholeManifest(head) {
  /** @type {Record<string, FileEntry>} */
  const files = {};
  const add = (/** @type {string} */ rel, /** @type {FileEntry} */ e) => {
    // an entry named `__proto__` is an own key, as JSON.parse makes it
    if (rel === '__proto__') {
      Object.defineProperty(files, rel, { value: e, enumerable: true, writable: true, configurable: true });
    } else {
      files[rel] = e;
    }
  };
  return { add, done: () => ({ ...head, files }) };
}

const CHUNK_BYTES = 1 << 20;

/**
 * Reading one manifest file as a generator of I/O requests, run async or sync, so the two cannot
 * drift; refuses what is not a regular file or is larger than `maxBytes`.
 * @template T
 * @param {string} file
 * @param {number} maxBytes
 * @param {(fd: unknown, size: number) => Generator<[string, ...any[]], T, any>} body
 * @returns {Generator<[string, ...any[]], T | null, any>}
 */
function* readDoc(file, maxBytes, body) {
  let fd;
  try {
    fd = yield ['open', file];
  } catch (err) {
    return unreadable(file, err);
  }
  try {
    const st = yield ['fstat', fd];
    if (!st.isFile()) {
      const message = `Cannot read manifest ${file}: not a regular file`;
      throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', message, { path: file });
    }
    if (st.size > maxBytes) throw tooLarge(file, st.size, maxBytes);
    return yield* body(fd, st.size);
  } catch (err) {
    return unreadable(file, err);
  } finally {
    yield ['close', fd];
  }
}

/**
 * The text of an open manifest, collected: writeManifest()'s layout in batches of lines (neither the
 * whole text nor a second copy of the entries held), any other JSON read again and parsed whole.
 * @template T
 * @param {unknown} fd
 * @param {string} file
 * @param {number} maxBytes
 * @param {Collector<T>} collect
 * @returns {Generator<[string, ...any[]], T, any>}
 */
function* readText(fd, file, maxBytes, collect) {
  /** @type {{ head: Manifest | null, sink: ReturnType<Collector<T>> | null, sdHash: string | undefined }} */
  const got = { head: null, sink: null, sdHash: undefined };
  const lines = new ManifestLines((h) => {
    got.head = validateHead(h, file);
    got.sink = collect(got.head);
  }, (rel, e) => {
    const head = /** @type {Manifest} */ (got.head);
    const why = entryProblem(rel, e, head.schema);
    if (why !== null) throw bad(file, why);
    if (rel === head.siteDictionary?.path) got.sdHash = /** @type {FileEntry} */ (e).hash;
    /** @type {ReturnType<Collector<T>>} */ (got.sink).add(rel, /** @type {FileEntry} */ (e));
  });
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.allocUnsafe(CHUNK_BYTES); // one buffer for every read: the decoder copies out of it
  let ours = true;
  for (let at = 0, n; ours && (n = yield* readAt(fd, at, file, maxBytes, buf)).length > 0; at += n.length) {
    ours = lines.push(decoder.write(n));
  }
  if (ours && lines.push(decoder.end()) && lines.end() && got.head !== null && got.sink !== null) {
    const sd = got.head.siteDictionary;
    if (sd !== undefined && !siteDictionaryOk(sd, got.sdHash)) throw bad(file, SITE_DICTIONARY_PROBLEM);
    return got.sink.done();
  }
  // Not in our layout (JSON all the same, or not JSON): read again from the start and parse it whole.
  const parts = [];
  for (let at = 0, n; (n = yield* readAt(fd, at, file, maxBytes, Buffer.allocUnsafe(CHUNK_BYTES))).length > 0;) {
    parts.push(n);
    at += n.length;
  }
  const m = parseManifest(Buffer.concat(parts).toString('utf8'), file);
  const sink = collect({ ...m, files: {} });
  for (const rel in m.files) if (Object.hasOwn(m.files, rel)) sink.add(rel, m.files[rel]);
  return sink.done();
}

/** Pieces of a file read at a time into its buffer (an async read holds one of libuv's threads). */
const BYTES_PIECE = 16 << 20;

/**
 * The whole file as bytes, in one buffer of its fstat size (read on, up to `maxBytes`, if it grew).
 * @param {unknown} fd
 * @param {number} size
 * @param {string} file
 * @param {number} maxBytes
 * @returns {Generator<[string, ...any[]], Buffer, any>}
 */
function* readBytes(fd, size, file, maxBytes) {
  const parts = [];
  let part = Buffer.allocUnsafe(size);
  let filled = 0;
  for (let at = 0; ;) {
    // full: read on into a new piece only if the file grew (no copy of a file read at its size)
    const room = filled === part.length ? Buffer.allocUnsafe(CHUNK_BYTES) : null;
    const n = (yield* readAt(fd, at, file, maxBytes, room ?? part.subarray(filled, filled + BYTES_PIECE))).length;
    if (n === 0) break;
    if (room !== null) {
      parts.push(part);
      part = room;
      filled = 0;
    }
    filled += n;
    at += n;
  }
  parts.push(part.subarray(0, filled));
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/**
 * Up to `buf.length` bytes of the file from `at` into `buf` (empty at the end); refused past `maxBytes`.
 * @param {unknown} fd
 * @param {number} at
 * @param {string} file
 * @param {number} maxBytes
 * @param {Buffer} buf
 * @returns {Generator<[string, ...any[]], Buffer, any>}
 */
function* readAt(fd, at, file, maxBytes, buf) {
  const n = yield ['read', fd, buf, at];
  if (at + n > maxBytes) throw tooLarge(file, at + n, maxBytes);
  return buf.subarray(0, n);
}

/**
 * @param {string} file
 * @param {number} size
 * @param {number} maxBytes
 */
function tooLarge(file, size, maxBytes) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
    `Manifest ${file} is ${size} bytes, above the limit of ${maxBytes} bytes: ` +
    'raise options.maxManifestBytes if it is yours', { path: file });
}

/** @type {Record<string, (...args: any[]) => any>} */
const SYNC_IO = {
  open: (file) => fsSync.openSync(file, READ_FLAGS),
  fstat: (fd) => fsSync.fstatSync(fd),
  read: (fd, buf, at) => fsSync.readSync(fd, buf, 0, buf.length, at),
  close: (fd) => fsSync.closeSync(fd),
};

/** @type {Record<string, (...args: any[]) => Promise<any>>} */
const ASYNC_IO = {
  open: (file) => fs.open(file, READ_FLAGS),
  fstat: (fh) => fh.stat(),
  read: async (fh, buf, at) => (await fh.read(buf, 0, buf.length, at)).bytesRead,
  close: (fh) => fh.close(),
};

/**
 * @template T
 * @typedef {{ maxBytes?: number, collect?: Collector<T> }} ReadOptions
 *   maxBytes: refuse a manifest larger than this (MAX_MANIFEST_BYTES); collect: what is kept of it
 *   (the whole Manifest by default; serveStatic keeps a compact index)
 */

/**
 * Read and validate a manifest; null when the file does not exist.
 * @template [T=Manifest]
 * @param {string} file
 * @param {ReadOptions<T>} [options]
 * @returns {Promise<T | null>}
 */
export async function readManifest(
  file,
  { maxBytes = MAX_MANIFEST_BYTES, collect = /** @type {any} */ (wholeManifest) } = {},
) {
  return runAsync(readDoc(file, maxBytes, (fd) => readText(fd, file, maxBytes, collect)));
}

/**
 * The bytes of a manifest file, unparsed (serveStatic indexes them, lib/serve/manifest-index/manifest-index.js),
 * refused as readManifest() refuses a file (not a regular file, larger than `maxBytes`); null when
 * the file does not exist.
 * @param {string} file
 * @param {{ maxBytes?: number }} [options]
 * @returns {Promise<Buffer | null>}
 */
export function readManifestBytes(file, { maxBytes = MAX_MANIFEST_BYTES } = {}) {
  return runAsync(readDoc(file, maxBytes, (fd, size) => readBytes(fd, size, file, maxBytes)));
}

/**
 * Synchronous twin of readManifestBytes(), for serveStatic's construction.
 * @param {string} file
 * @param {{ maxBytes?: number }} [options]
 * @returns {Buffer | null}
 */
export function readManifestBytesSync(file, { maxBytes = MAX_MANIFEST_BYTES } = {}) {
  return runSync(readDoc(file, maxBytes, (fd, size) => readBytes(fd, size, file, maxBytes)));
}

/**
 * @template T
 * @typedef {(size: number) => { push(piece: Buffer): void, end(): T }} Sink
 *   what takes a manifest a piece at a time (given the file's size first); `end()` gives the result
 */

/**
 * Read a manifest a piece at a time into a sink (serveStatic keeps only what it needs of them,
 * lib/serve/manifest-index/compact.js), refused as readManifest() refuses a file; null when it does not
 * exist. The pieces share one buffer: the sink copies what it keeps.
 * @template T
 * @param {string} file
 * @param {{ maxBytes?: number, sink: Sink<T> }} options
 * @returns {Promise<T | null>}
 */
export function readManifestPieces(file, { maxBytes = MAX_MANIFEST_BYTES, sink }) {
  return runAsync(readDoc(file, maxBytes, (fd, size) => readPieces(fd, size, file, maxBytes, sink)));
}

/**
 * Synchronous twin of readManifestPieces(), for serveStatic's construction.
 * @template T
 * @param {string} file
 * @param {{ maxBytes?: number, sink: Sink<T> }} options
 * @returns {T | null}
 */
export function readManifestPiecesSync(file, { maxBytes = MAX_MANIFEST_BYTES, sink }) {
  return runSync(readDoc(file, maxBytes, (fd, size) => readPieces(fd, size, file, maxBytes, sink)));
}

/**
 * @template T
 * @param {unknown} fd
 * @param {number} size
 * @param {string} file
 * @param {number} maxBytes
 * @param {Sink<T>} sinkOf
 * @returns {Generator<[string, ...any[]], T, any>}
 */
function* readPieces(fd, size, file, maxBytes, sinkOf) {
  const sink = sinkOf(size);
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let at = 0, n; (n = yield* readAt(fd, at, file, maxBytes, buf)).length > 0; at += n.length) sink.push(n);
  return sink.end();
}

/**
 * @template T
 * @param {Generator<[string, ...any[]], T, any>} steps
 * @returns {Promise<T>}
 */
async function runAsync(steps) {
  let r = steps.next();
  while (!r.done) {
    const [op, ...args] = r.value;
    r = await ASYNC_IO[op](...args).then((v) => steps.next(v), (err) => steps.throw(err));
  }
  return r.value;
}

/**
 * @template T
 * @param {Generator<[string, ...any[]], T, any>} steps
 * @returns {T}
 */
function runSync(steps) {
  let r = steps.next();
  while (!r.done) r = stepSync(steps, r.value);
  return r.value;
}

/**
 * Synchronous twin of readManifest(), for serveStatic's construction.
 * @template [T=Manifest]
 * @param {string} file
 * @param {ReadOptions<T>} [options]
 * @returns {T | null}
 */
export function readManifestSync(
  file,
  { maxBytes = MAX_MANIFEST_BYTES, collect = /** @type {any} */ (wholeManifest) } = {},
) {
  return runSync(readDoc(file, maxBytes, (fd) => readText(fd, file, maxBytes, collect)));
}

/**
 * @param {Generator<[string, ...any[]], any, any>} steps
 * @param {[string, ...any[]]} request
 */
function stepSync(steps, [op, ...args]) {
  let value;
  try {
    value = SYNC_IO[op](...args);
  } catch (err) {
    return steps.throw(err);
  }
  return steps.next(value);
}

/**
 * Build the manifest document: files sorted by path so that the output is deterministic.
 * @param {{ tool: string, settings: Manifest['settings'], files: Map<string, FileEntry> | Record<string, FileEntry>,
 *   siteDictionary?: SiteDictionaryEntry | null }} parts
 * @returns {Manifest}
 */
export function buildManifest({ tool, settings, files, siteDictionary = null }) {
  const map = files instanceof Map ? files : new Map(Object.entries(files));
  // The paths sorted, not [path, entry] pairs: on a big site those pairs are the peak of a pass.
  const rels = [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // (fromEntries: a file named `__proto__` is an own key, as JSON.parse makes it)
  const sorted = Object.fromEntries((function* inOrder() {
    for (const rel of rels) yield [rel, /** @type {FileEntry} */ (map.get(rel))];
  })());
  const generatedAt = new Date().toISOString();
  /** @type {Manifest} */
  const m = { schema: SCHEMA_VERSION, tool, settings, generatedAt, files: sorted };
  if (siteDictionary !== null) m.siteDictionary = siteDictionary;
  return m;
}

/** Characters of manifest text handed to the file at a time (see manifestText()). */
const CHUNK_CHARS = 1 << 20;

/**
 * The manifest's JSON text in pieces of about CHUNK_CHARS, one line per file, never the whole
 * text of a big site in memory at once.
 * @param {Manifest} manifest
 * @returns {Generator<string>}
 */
export function* manifestText(manifest) {
  const { files, ...head } = manifest;
  yield* manifestTextOf(head, entryTexts(files));
}

/**
 * @param {Record<string, FileEntry>} files
 * @returns {Generator<[string, string]>}
 */
function* entryTexts(files) {
  for (const rel in files) if (Object.hasOwn(files, rel)) yield [rel, JSON.stringify(files[rel])];
}

/**
 * manifestText() from the head and each entry's JSON text, in order (watch mode keeps its entries
 * as text: lib/watch/passes/manifest-records.js).
 * @param {Omit<Manifest, 'files'>} head
 * @param {Iterable<[string, string]>} entries [path, JSON of its entry]
 * @returns {Generator<string>}
 */
export function* manifestTextOf(head, entries) {
  const top = JSON.stringify({ ...head, files: null }, null, 1);
  let chunk = `${top.slice(0, top.lastIndexOf('null'))}{`;
  let first = true;
  for (const [rel, json] of entries) {
    chunk += `${first ? '' : ','}\n  ${JSON.stringify(rel)}: ${json}`;
    first = false;
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}${first ? '' : '\n '}}\n}\n`;
}

/**
 * Write the manifest atomically, in pieces (manifestText()).
 * @param {string} file
 * @param {Manifest} manifest
 */
export async function writeManifest(file, manifest) {
  // --manifest may name a folder that does not exist yet (meta/manifest.json): make it.
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeAtomic(file, manifestText(manifest));
}


const oneShot = typeof crypto.hash === 'function';

/**
 * SHA-256 of `data` as text in `encoding`: crypto.hash() where Node has it (no Hash object per call).
 * @param {string | NodeJS.ArrayBufferView} data
 * @param {'hex' | 'base64url'} encoding
 * @returns {string}
 */
export function sha256(data, encoding) {
  return oneShot ? crypto.hash('sha256', data, encoding) : crypto.createHash('sha256').update(data).digest(encoding);
}

/**
 * Content hash as recorded in the manifest: `sha256-<base64url>`.
 * @param {string | NodeJS.ArrayBufferView} buf
 */
export function contentHash(buf) {
  return 'sha256-' + sha256(buf, 'base64url');
}

/** An incremental hasher that ends in the same format as contentHash(). */
export function createHasher() {
  const h = crypto.createHash('sha256');
  return {
    update: (/** @type {string | NodeJS.ArrayBufferView} */ chunk) => h.update(chunk),
    digest: () => 'sha256-' + h.digest('base64url'),
  };
}
