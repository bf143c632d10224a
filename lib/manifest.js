import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { PrecompressorError } from './errors.js';
import { writeAtomic } from './fs-atomic.js';
import { isEncoding } from './encodings.js';

/**
 * Bump when the manifest's shape changes. Version 2 added `dictionary` and `deltas` (deploy deltas,
 * RFC 9842) to file entries; version 3 the top-level `siteDictionary` (the site dictionary, whose
 * page variants are `deltas` too, with or without the page's own `dictionary`). Versions 1 and 2
 * are still read (they have neither).
 */
export const SCHEMA_VERSION = 3;
const READABLE_SCHEMAS = [1, 2, 3];

/**
 * @typedef {{ size: number }} VariantEntry
 * @typedef {{ hash: string, match: string, dest: string | null, hashed: boolean }} DictionaryEntry
 *   hash: SHA-256 of the identity bytes in standard base64, as `Available-Dictionary` carries it;
 *   match: URLPattern relative to the file's URL, for `Use-As-Dictionary`; dest: `match-dest` or null
 * @typedef {Partial<Record<'dcb' | 'dcz', { size: number, hash: string }>>} DeltaEntry
 * @typedef {{
 *   size: number,
 *   mtimeMs: number,
 *   hash: string,
 *   type?: string,
 *   variants: Partial<Record<'br' | 'gzip' | 'zstd', VariantEntry>>,
 *   skipped?: 'excluded' | 'compressed-format' | 'not-smaller' | 'empty',
 *   dictionary?: DictionaryEntry,
 *   deltas?: Record<string, DeltaEntry>,
 * }} FileEntry
 * @typedef {{
 *   schema: number,
 *   tool: string,
 *   settings: { encodings: string[], brotliQuality: number, gzipLevel: number, zstdLevel: number, zopfli: boolean, minRatio: number },
 *   generatedAt: string,
 *   files: Record<string, FileEntry>,
 *   siteDictionary?: SiteDictionaryEntry,
 * }} Manifest
 * @typedef {{ path: string, hash: string }} SiteDictionaryEntry
 *   path: the dictionary file (listed in `files`); hash: its content hash (`sha256-<base64url>`)
 */

/**
 * The manifest's entry for `rel`, or undefined. Own keys only: a file named `constructor` or
 * `__proto__` must not find what Object.prototype has under that name.
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

/**
 * Why `rel` cannot be a file path of a manifest, or null (pure). One rule for the writer (the walk
 * reports such a file and leaves it out) and the reader (validateManifest()), so that what one run
 * writes the server and the next run accept: a relative POSIX path inside the folder (not empty,
 * no leading `/`, no backslash, no empty, `.` or `..` segment), without control characters (no name
 * can forge a line in a log or a header), and valid Unicode (a name that was not valid UTF-8 on disk
 * reads back with U+FFFD and would not open under that name).
 * @param {string} rel
 * @returns {string | null}
 */
export function pathProblem(rel) {
  if (rel === '' || rel.startsWith('/') || rel.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    return 'is not a relative POSIX path inside the folder';
  }
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
 * Check that `data` has the documented shape. Throws a PrecompressorError naming the first problem.
 * @param {unknown} data
 * @param {string} [file] for messages
 * @returns {Manifest}
 */
export function validateManifest(data, file = 'manifest') {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad(file, 'not a JSON object');
  const m = /** @type {any} */ (data);
  if (!READABLE_SCHEMAS.includes(m.schema)) throw bad(file, `schema ${JSON.stringify(m.schema)} is not one of ${READABLE_SCHEMAS.join(', ')}`);
  if (m.files === null || typeof m.files !== 'object' || Array.isArray(m.files)) throw bad(file, '"files" is not an object');
  for (const [rel, e] of Object.entries(m.files)) {
    const problem = pathProblem(rel);
    if (problem !== null) throw bad(file, `file path ${JSON.stringify(rel)} ${problem}`);
    if (e === null || typeof e !== 'object') throw bad(file, `entry ${JSON.stringify(rel)} is not an object`);
    if (!Number.isSafeInteger(e.size) || e.size < 0) throw bad(file, `entry ${JSON.stringify(rel)} has no valid size`);
    // a Date holds ±8.64e15 ms; beyond it Last-Modified would read "Invalid Date"
    if (typeof e.mtimeMs !== 'number' || !(Math.abs(e.mtimeMs) <= MAX_DATE_MS)) throw bad(file, `entry ${JSON.stringify(rel)} has no valid mtimeMs`);
    if (typeof e.hash !== 'string') throw bad(file, `entry ${JSON.stringify(rel)} has no hash`);
    // sent as Content-Type: a CR, LF or other byte Node refuses in a header would turn every request into a 500
    if (e.type !== undefined && (typeof e.type !== 'string' || INVALID_HEADER_CHAR.test(e.type))) {
      throw bad(file, `entry ${JSON.stringify(rel)} has an invalid type ${JSON.stringify(e.type)}`);
    }
    if (e.variants === null || typeof e.variants !== 'object') throw bad(file, `entry ${JSON.stringify(rel)} has no variants object`);
    for (const [enc, v] of Object.entries(e.variants)) {
      if (!isEncoding(enc)) throw bad(file, `entry ${JSON.stringify(rel)} has unknown encoding ${JSON.stringify(enc)}`);
      if (v === null || typeof v !== 'object' || !Number.isSafeInteger(v.size) || v.size < 0) {
        throw bad(file, `entry ${JSON.stringify(rel)} variant ${enc} has no valid size`);
      }
    }
    const why = dictionaryProblem(e, m.schema);
    if (why !== null) throw bad(file, `entry ${JSON.stringify(rel)} ${why}`);
  }
  const sd = m.siteDictionary;
  if (sd !== undefined && (sd === null || typeof sd !== 'object' || typeof sd.path !== 'string' || !Object.hasOwn(m.files, sd.path) ||
    typeof sd.hash !== 'string' || m.files[sd.path].hash !== sd.hash)) {
    throw bad(file, 'siteDictionary is not { path, hash } of a listed file');
  }
  return m;
}

const B64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;
export const DELTA_SUFFIXES = Object.freeze(/** @type {const} */ (['dcb', 'dcz']));

/**
 * What is wrong with an entry's `dictionary` and `deltas`, or null (before schema 3, deltas need a dictionary).
 * @param {any} e an entry as parsed, not yet validated
 * @param {number} schema
 */
function dictionaryProblem(e, schema) {
  if (e.dictionary !== undefined) {
    const d = e.dictionary;
    if (d === null || typeof d !== 'object' || typeof d.hash !== 'string' || !B64_SHA256.test(d.hash) ||
      typeof d.match !== 'string' || d.match === '' || !(d.dest === null || typeof d.dest === 'string') || typeof d.hashed !== 'boolean') {
      return 'has an invalid dictionary';
    }
  }
  if (e.deltas === undefined) return null;
  if (e.deltas === null || typeof e.deltas !== 'object' || (schema < 3 && e.dictionary === undefined)) return 'has deltas but no dictionary';
  for (const [dict, byEnc] of Object.entries(e.deltas)) {
    if (!B64_SHA256.test(dict) || byEnc === null || typeof byEnc !== 'object') return `has an invalid delta key ${JSON.stringify(dict)}`;
    for (const [enc, v] of Object.entries(byEnc)) {
      if (!(/** @type {readonly string[]} */ (DELTA_SUFFIXES)).includes(enc) || v === null || typeof v !== 'object' || !Number.isSafeInteger(v.size) || v.size < 1 || typeof v.hash !== 'string') {
        return `has an invalid ${JSON.stringify(enc)} delta`;
      }
    }
  }
  return null;
}

/**
 * Path of the delta of `rel` against the dictionary whose SHA-256 is `dictHash` (standard base64):
 * `<rel>.<first 16 hex digits of the hash>.<dcb|dcz>`.
 * @param {string} rel
 * @param {string} dictHash
 * @param {'dcb' | 'dcz'} encoding
 */
export function deltaPath(rel, dictHash, encoding) {
  return `${rel}.${Buffer.from(dictHash, 'base64').toString('hex').slice(0, 16)}.${encoding}`;
}

/**
 * Path of the site dictionary whose content hash (`sha256-<base64url>`) is `hash`, at the root:
 * `precompressor-dictionary.<first 16 hex digits of its SHA-256>.dict`.
 * @param {string} hash
 */
export function siteDictionaryPath(hash) {
  return `precompressor-dictionary.${Buffer.from(hash.replace(/^sha256-/, ''), 'base64url').toString('hex').slice(0, 16)}.dict`;
}

const DELTA_NAME = /^(.+)\.[0-9a-f]{16}\.(?:dcb|dcz)$/;

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
  /** @type {[string, 'dcb' | 'dcz', string][]} */
  const out = [];
  for (const [dict, byEnc] of Object.entries(entry?.deltas ?? {})) {
    for (const enc of DELTA_SUFFIXES) if (byEnc[enc]) out.push([dict, enc, deltaPath(rel, dict, enc)]);
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
 * The largest manifest read by default, in bytes: a site of a million files (about 360 bytes per
 * entry as writeManifest() indents it) fits. serveStatic's `maxManifestBytes` raises it, up to the
 * engine's longest string (about 512 MiB in V8).
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
  throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `Cannot read manifest ${file}: ${/** @type {Error} */ (err).message}`, { path: file, cause: err });
}

/**
 * Reading one manifest file, as a generator of I/O requests run by readManifest() (async) or
 * readManifestSync(), so the two cannot drift: yields [op, ...args] with op 'open', 'fstat',
 * 'read' (receives the bytes read) or 'close'; an I/O error is thrown back in. Refuses what is
 * not a regular file and what is larger than `maxBytes`, before and while reading (a file that
 * grows under us), so memory stays bounded by the limit.
 * @param {string} file
 * @param {number} maxBytes
 * @returns {Generator<[string, ...any[]], Manifest | null, any>}
 */
function* readDoc(file, maxBytes) {
  let fd;
  try {
    fd = yield ['open', file];
  } catch (err) {
    return unreadable(file, err);
  }
  let bytes;
  try {
    const st = yield ['fstat', fd];
    if (!st.isFile()) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `Cannot read manifest ${file}: not a regular file`, { path: file });
    }
    const tooLarge = (/** @type {number} */ size) => new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
      `Manifest ${file} is ${size} bytes, above the limit of ${maxBytes} bytes: raise options.maxManifestBytes if it is yours`, { path: file });
    if (st.size > maxBytes) throw tooLarge(st.size);
    // one byte more than fstat says: seeing EOF there proves the file did not grow
    let buf = Buffer.allocUnsafe(st.size + 1);
    let used = 0;
    for (let n; (n = yield ['read', fd, buf, used]) > 0;) {
      used += n;
      if (used > maxBytes) throw tooLarge(used);
      if (used === buf.length) {
        const next = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(next);
        buf = next;
      }
    }
    bytes = buf.subarray(0, used);
  } catch (err) {
    return unreadable(file, err);
  } finally {
    yield ['close', fd];
  }
  return parseManifest(bytes.toString('utf8'), file);
}

/** @type {Record<string, (...args: any[]) => any>} */
const SYNC_IO = {
  open: (file) => fsSync.openSync(file, READ_FLAGS),
  fstat: (fd) => fsSync.fstatSync(fd),
  read: (fd, buf, at) => fsSync.readSync(fd, buf, at, buf.length - at, null),
  close: (fd) => fsSync.closeSync(fd),
};

/** @type {Record<string, (...args: any[]) => Promise<any>>} */
const ASYNC_IO = {
  open: (file) => fs.open(file, READ_FLAGS),
  fstat: (fh) => fh.stat(),
  read: async (fh, buf, at) => (await fh.read(buf, at, buf.length - at, null)).bytesRead,
  close: (fh) => fh.close(),
};

/**
 * Read and validate a manifest. Returns null when the file does not exist.
 * @param {string} file
 * @param {{ maxBytes?: number }} [options] refuse a manifest larger than this (MAX_MANIFEST_BYTES)
 * @returns {Promise<Manifest | null>}
 */
export async function readManifest(file, { maxBytes = MAX_MANIFEST_BYTES } = {}) {
  const steps = readDoc(file, maxBytes);
  let r = steps.next();
  while (!r.done) {
    const [op, ...args] = r.value;
    r = await ASYNC_IO[op](...args).then((v) => steps.next(v), (err) => steps.throw(err));
  }
  return r.value;
}

/**
 * Synchronous twin of readManifest(), for serveStatic's construction.
 * @param {string} file
 * @param {{ maxBytes?: number }} [options]
 * @returns {Manifest | null}
 */
export function readManifestSync(file, { maxBytes = MAX_MANIFEST_BYTES } = {}) {
  const steps = readDoc(file, maxBytes);
  let r = steps.next();
  while (!r.done) r = stepSync(steps, r.value);
  return r.value;
}

/**
 * Run one I/O request synchronously and hand its result (or its error) back to the generator.
 * @param {Generator<[string, ...any[]], Manifest | null, any>} steps
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
  const entries = files instanceof Map ? [...files] : Object.entries(files);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  /** @type {Manifest} */
  const m = { schema: SCHEMA_VERSION, tool, settings, generatedAt: new Date().toISOString(), files: Object.fromEntries(entries) };
  if (siteDictionary !== null) m.siteDictionary = siteDictionary;
  return m;
}

/**
 * Write the manifest atomically: readers see the old or the new document, never a partial one.
 * @param {string} file
 * @param {Manifest} manifest
 */
export async function writeManifest(file, manifest) {
  // --manifest may name a folder that does not exist yet (meta/manifest.json): make it.
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeAtomic(file, JSON.stringify(manifest, null, 1) + '\n');
}

/**
 * Content hash as recorded in the manifest: `sha256-<base64url>`.
 * @param {string | NodeJS.ArrayBufferView} buf
 */
export function contentHash(buf) {
  return 'sha256-' + crypto.createHash('sha256').update(buf).digest('base64url');
}

/** An incremental hasher that ends in the same format as contentHash(). */
export function createHasher() {
  const h = crypto.createHash('sha256');
  return { update: (/** @type {string | NodeJS.ArrayBufferView} */ chunk) => h.update(chunk), digest: () => 'sha256-' + h.digest('base64url') };
}
