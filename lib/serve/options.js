import path from 'node:path';
import { optionError } from '../errors.js';
import { MANIFEST_NAME, fillOptions } from '../options.js';
import { VARIANT_SUFFIX } from '../manifest.js';

/** serve-static caps max-age at one year; so do we. */
export const MAX_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Every option of `serveStatic(root, options)` with its default. The README table mirrors this.
 * Names and units follow express.static / serve-static (maxAge in milliseconds).
 */
export const SERVE_DEFAULTS = Object.freeze({
  manifest: null, // <root>/precompressor-manifest.json; false = no manifest, stat-based serving only
  unlisted: false, // serve files that the manifest does not list (stat per request, identity only)
  encodings: Object.freeze(['br', 'zstd', 'gzip']),
  index: Object.freeze(['index.html']),
  dotfiles: 'ignore',
  etag: true,
  lastModified: true,
  cacheControl: true,
  maxAge: 0,
  immutable: false,
  acceptRanges: true,
  setHeaders: null,
  fallthrough: true,
  redirect: true,
  extensions: false,
  spa: false,
  memoryBudget: 16 * 1024 * 1024,
  memoryFileLimit: 64 * 1024,
  watch: true,
  dictionaries: true, // deploy deltas (RFC 9842): Use-As-Dictionary on files with a family, deltas to browsers that offer one
  immutableHashed: true, // hashed assets with a family: Cache-Control "public, max-age=31536000, immutable"
});


const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_557_600_000 };
const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d|w|y)?$/i;

/**
 * Parse a duration like serve-static's `maxAge`: a number of milliseconds or a string such as
 * "1d", "2h", "30m", "10s", "500ms", "1y", "1.5h", "100" (ms). Returns NaN for anything else.
 * @param {number | string} value
 * @returns {number}
 */
export function parseDuration(value) {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : NaN;
  if (typeof value !== 'string') return NaN;
  const m = DURATION.exec(value.trim());
  if (!m) return NaN;
  return Number(m[1]) * UNITS[/** @type {keyof typeof UNITS} */ ((m[2] ?? 'ms').toLowerCase())];
}

function bool(o, k) {
  if (typeof o[k] !== 'boolean') throw optionError(`options.${k}`, 'a boolean', o[k]);
  return o[k];
}

function byteCount(o, k) {
  const v = o[k];
  if (!Number.isSafeInteger(v) || v < 0) throw optionError(`options.${k}`, 'a non-negative integer (bytes)', v);
  return v;
}

function names(o, k, { allowFalse, strip }) {
  const v = o[k];
  if (v === false && allowFalse) return Object.freeze([]);
  const list = typeof v === 'string' ? [v] : v;
  const ok = Array.isArray(list) && list.every((s) => typeof s === 'string' && s !== '' && !s.includes('/') && !s.includes('\\'));
  if (!ok) throw optionError(`options.${k}`, `a file name or an array of file names${allowFalse ? ', or false' : ''}`, v);
  return Object.freeze(list.map((s) => (strip ? s.replace(/^\./, '') : s)));
}

/**
 * @typedef {'br' | 'zstd' | 'gzip'} Encoding
 * @typedef {(res: import('node:http').ServerResponse, path: string, stat: { size: number, mtime: Date, mtimeMs: number }, encoding: string) => void} SetHeaders
 * @typedef {{
 *   root: string, manifest: string | null, unlisted: boolean, encodings: readonly Encoding[],
 *   index: readonly string[], dotfiles: 'ignore' | 'deny' | 'allow', etag: boolean, lastModified: boolean,
 *   cacheControl: string | null, acceptRanges: boolean, setHeaders: SetHeaders | null, fallthrough: boolean,
 *   redirect: boolean, extensions: readonly string[], spa: string | null, memoryBudget: number,
 *   memoryFileLimit: number, watch: boolean, dictionaries: boolean, immutableHashed: boolean,
 * }} ServeOptions
 */

/**
 * Validate and fill the options of `serveStatic(root, options)`. Returns a frozen object;
 * nothing downstream re-checks or re-defaults. `cacheControl` comes back as the header value
 * (or null), computed once from `cacheControl`, `maxAge` and `immutable`.
 * @param {string} root
 * @param {object} [options]
 * @returns {Readonly<ServeOptions>}
 */
export function normalizeServeOptions(root, options = {}) {
  if (typeof root !== 'string' || root === '') throw optionError('root', 'a non-empty string', root);
  const o = fillOptions(options, SERVE_DEFAULTS);
  const absRoot = path.resolve(root);

  let manifest = null;
  if (o.manifest === null || (typeof o.manifest === 'string' && o.manifest !== '')) {
    manifest = path.resolve(absRoot, o.manifest ?? MANIFEST_NAME);
  } else if (o.manifest !== false) {
    throw optionError('options.manifest', 'a non-empty path string or false', o.manifest);
  }

  const enc = o.encodings;
  if (!Array.isArray(enc) || enc.some((e) => !Object.hasOwn(VARIANT_SUFFIX, e)) || new Set(enc).size !== enc.length) {
    throw optionError('options.encodings', `an array of distinct encodings among ${Object.keys(VARIANT_SUFFIX).join(', ')}`, enc);
  }
  if (!['ignore', 'deny', 'allow'].includes(o.dotfiles)) {
    throw optionError('options.dotfiles', '"ignore", "deny" or "allow"', o.dotfiles);
  }
  const maxAge = parseDuration(o.maxAge);
  if (Number.isNaN(maxAge)) throw optionError('options.maxAge', 'a number of milliseconds or a duration string like "1d"', o.maxAge);
  const cacheControl = bool(o, 'cacheControl')
    ? `public, max-age=${Math.floor(Math.min(maxAge, MAX_MAX_AGE_MS) / 1000)}${bool(o, 'immutable') ? ', immutable' : ''}`
    : (bool(o, 'immutable'), null);
  if (o.setHeaders !== null && typeof o.setHeaders !== 'function') {
    throw optionError('options.setHeaders', 'a function', o.setHeaders);
  }
  let spa = null;
  if (o.spa === true) spa = 'index.html';
  else if (typeof o.spa === 'string' && o.spa !== '' && !o.spa.startsWith('/') && !o.spa.split('/').includes('..')) spa = o.spa;
  else if (o.spa !== false) throw optionError('options.spa', 'a boolean or a file path relative to root', o.spa);

  return Object.freeze({
    root: absRoot,
    manifest,
    unlisted: bool(o, 'unlisted') || manifest === null,
    encodings: Object.freeze([...enc]),
    index: names(o, 'index', { allowFalse: true, strip: false }),
    dotfiles: o.dotfiles,
    etag: bool(o, 'etag'),
    lastModified: bool(o, 'lastModified'),
    cacheControl,
    acceptRanges: bool(o, 'acceptRanges'),
    setHeaders: o.setHeaders,
    fallthrough: bool(o, 'fallthrough'),
    redirect: bool(o, 'redirect'),
    extensions: names(o, 'extensions', { allowFalse: true, strip: true }),
    spa,
    memoryBudget: byteCount(o, 'memoryBudget'),
    memoryFileLimit: byteCount(o, 'memoryFileLimit'),
    watch: bool(o, 'watch'),
    dictionaries: bool(o, 'dictionaries'),
    immutableHashed: bool(o, 'immutableHashed'),
  });
}
