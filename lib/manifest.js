import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { PrecompressorError } from './errors.js';
import { writeAtomic } from './fs-atomic.js';

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
 * The suffix a variant of each encoding has on disk: `<path><suffix>`.
 * @type {Readonly<Record<string, string>>}
 */
export const VARIANT_SUFFIX = Object.freeze({ br: '.br', gzip: '.gz', zstd: '.zst' });

/** Path of the variant file of `rel` (POSIX, relative to root) for `encoding`. */
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

/**
 * @param {string} rel
 * @param {string} encoding
 */
export function variantPath(rel, encoding) {
  return rel + VARIANT_SUFFIX[encoding];
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
    if (rel === '' || rel.startsWith('/') || rel.includes('\\') || rel.split('/').some((s) => s === '..' || s === '.' || s === '')) {
      throw bad(file, `file path ${JSON.stringify(rel)} is not a relative POSIX path inside the folder`);
    }
    if (e === null || typeof e !== 'object') throw bad(file, `entry ${JSON.stringify(rel)} is not an object`);
    if (!Number.isSafeInteger(e.size) || e.size < 0) throw bad(file, `entry ${JSON.stringify(rel)} has no valid size`);
    if (typeof e.mtimeMs !== 'number') throw bad(file, `entry ${JSON.stringify(rel)} has no valid mtimeMs`);
    if (typeof e.hash !== 'string') throw bad(file, `entry ${JSON.stringify(rel)} has no hash`);
    if (e.variants === null || typeof e.variants !== 'object') throw bad(file, `entry ${JSON.stringify(rel)} has no variants object`);
    for (const [enc, v] of Object.entries(e.variants)) {
      if (!Object.hasOwn(VARIANT_SUFFIX, enc)) throw bad(file, `entry ${JSON.stringify(rel)} has unknown encoding ${JSON.stringify(enc)}`);
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
 * @param {string} file
 * @param {unknown} err
 */
function unreadable(file, err) {
  // missing: no such file, or a path through a file (a root that is a file has no manifest)
  if (['ENOENT', 'ENOTDIR'].includes(/** @type {any} */ (err).code)) return null;
  throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `Cannot read manifest ${file}: ${/** @type {Error} */ (err).message}`, { path: file, cause: err });
}

/**
 * Read and validate a manifest. Returns null when the file does not exist.
 * @param {string} file
 * @returns {Promise<Manifest | null>}
 */
export async function readManifest(file) {
  let text;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    return unreadable(file, err);
  }
  return parseManifest(text, file);
}

/**
 * Synchronous twin of readManifest(), for serveStatic's construction.
 * @param {string} file
 * @returns {Manifest | null}
 */
export function readManifestSync(file) {
  let text;
  try {
    text = fsSync.readFileSync(file, 'utf8');
  } catch (err) {
    return unreadable(file, err);
  }
  return parseManifest(text, file);
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

/** Characters of manifest text handed to the file at a time (see manifestText()). */
const CHUNK_CHARS = 1 << 20;

/**
 * The manifest's JSON text in pieces of about CHUNK_CHARS: the head indented, then one line per
 * file entry, so that a site of a million files never has its whole text in memory at once (a
 * line per file also keeps diffs of the manifest readable). JSON.parse reads it like any other.
 * @param {Manifest} manifest
 * @returns {Generator<string>}
 */
export function* manifestText(manifest) {
  const { files, ...head } = manifest;
  const top = JSON.stringify({ ...head, files: null }, null, 1);
  let chunk = `${top.slice(0, top.lastIndexOf('null'))}{`;
  let first = true;
  for (const rel in files) {
    if (!Object.hasOwn(files, rel)) continue;
    chunk += `${first ? '' : ','}\n  ${JSON.stringify(rel)}: ${JSON.stringify(files[rel])}`;
    first = false;
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}${first ? '' : '\n '}}\n}\n`;
}

/**
 * Write the manifest atomically: readers see the old or the new document, never a partial one.
 * Written in pieces (manifestText()), not from one string of the whole document.
 * @param {string} file
 * @param {Manifest} manifest
 */
export async function writeManifest(file, manifest) {
  // --manifest may name a folder that does not exist yet (meta/manifest.json): make it.
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeAtomic(file, manifestText(manifest));
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
