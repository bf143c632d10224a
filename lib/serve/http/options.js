import path from 'node:path';
import ms from 'ms';
import { optionError } from '../../errors.js';
import { MANIFEST_NAME, fillOptions } from '../../options.js';
import { ENCODING_NAMES, isEncoding } from '../../encodings.js';
import { MAX_MANIFEST_BYTES } from '../../manifest/manifest.js';
import { INDEX_FILES } from '../../site-policy.js';

/** serve-static caps max-age at one year; so do we. */
const MAX_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Every option of `serveStatic(root, options)` with its default; names and units are express.static's.
 */
export const SERVE_DEFAULTS = Object.freeze({
  manifest: null, // <root>/precompressor-manifest.json; false = no manifest, stat-based serving only
  unlisted: false, // serve files that the manifest does not list (stat per request, identity only)
  encodings: ENCODING_NAMES,
  index: INDEX_FILES,
  dotfiles: 'ignore',
  etag: true,
  lastModified: true,
  cacheControl: true,
  maxAge: 0,
  maxage: 0, // serve-static's lower-case spelling; maxAge wins when both are set
  immutable: false,
  acceptRanges: true,
  setHeaders: null,
  fallthrough: true,
  redirect: true,
  extensions: false,
  extensionsFirst: false, // `/about` tries the extensions (about.html) before a folder's redirect, as hosts do
  spa: false,
  memoryBudget: 16 * 1024 * 1024,
  memoryFileLimit: null, // a quarter of memoryBudget (4 MiB with its default)
  watch: true,
  // deploy deltas (RFC 9842): Use-As-Dictionary on files with a family, deltas to browsers that offer one
  dictionaries: true,
  immutableHashed: true, // names with a hash (manifest: hashed): Cache-Control "public, max-age=31536000, immutable"
  // a larger manifest is refused (at startup: thrown; on reload: the old table stays)
  maxManifestBytes: MAX_MANIFEST_BYTES,
  // (message) => void: what the start-up audit found (console.warn when undefined); null: no audit
  onWarning: undefined,
});


/**
 * Parse `maxAge` as send does (milliseconds, or `ms` text such as "1d"), clamped to [0, one year];
 * NaN for what send would silently make 0 ("abc"), so that a typo fails at startup.
 * @param {unknown} value
 * @returns {number}
 */
export function parseDuration(value) {
  let n = NaN;
  if (value === null || value === false) n = 0;
  else if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && value.trim() !== '') {
    n = ms(/** @type {import('ms').StringValue} */ (value)) ?? NaN;
  }
  return Number.isNaN(n) ? NaN : Math.min(Math.max(0, n), MAX_MAX_AGE_MS);
}

/**
 * The root argument, checked as express.static checks it, with the same TypeErrors (and our code).
 * @param {unknown} root
 * @returns {string}
 */
function checkRoot(root) {
  if (root && typeof root === 'string') return root;
  const fault = root ? 'root path must be a string' : 'root path required';
  const err = new TypeError(`${fault}: ${optionError('root', 'a non-empty path string', root).message}`);
  throw Object.assign(err, { code: 'ERR_PRECOMPRESSOR_OPTION' });
}

/**
 * @param {Record<string, any>} o
 * @param {string} k
 */
function bool(o, k) {
  if (typeof o[k] !== 'boolean') throw optionError(`options.${k}`, 'a boolean', o[k]);
  return o[k];
}

/**
 * @param {Record<string, any>} o
 * @param {string} k
 * @param {number} [min]
 */
function byteCount(o, k, min = 0) {
  const v = o[k];
  if (!Number.isSafeInteger(v) || v < min) {
    throw optionError(`options.${k}`, `a${min > 0 ? ' positive' : ' non-negative'} integer (bytes)`, v);
  }
  return v;
}

/**
 * A name or a list of names (`false` for none); with `subpaths`, a path below the folder (never `..`).
 * @param {Record<string, any>} o
 * @param {string} k
 * @param {{ strip: boolean, subpaths: boolean }} how
 */
function names(o, k, { strip, subpaths }) {
  const v = o[k];
  if (v === false) return Object.freeze([]);
  const list = typeof v === 'string' ? [v] : v;
  const valid = (/** @type {unknown} */ s) => typeof s === 'string' && s !== '' && !s.includes('\\') &&
    (subpaths ? s.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..') : !s.includes('/'));
  if (!Array.isArray(list) || !list.every(valid)) {
    throw optionError(`options.${k}`, `a file ${subpaths ? 'path' : 'name'} or an array of them, or false`, v);
  }
  return Object.freeze(list.map((s) => (strip ? s.replace(/^\./, '') : s)));
}

/**
 * @typedef {import('../../encodings.js').Encoding} Encoding
 * @typedef {(res: import('./decision.js').ResponseHeaders, path: string,
 *   stat: { size: number, mtime: Date, mtimeMs: number }, encoding: string) => void} SetHeaders
 * @typedef {{
 *   root: string, manifest: string | null, unlisted: boolean, encodings: readonly Encoding[],
 *   index: readonly string[], dotfiles: 'ignore' | 'deny' | 'allow', etag: boolean, lastModified: boolean,
 *   cacheControl: string | null, acceptRanges: boolean, setHeaders: SetHeaders | null, fallthrough: boolean,
 *   redirect: boolean, extensions: readonly string[], extensionsFirst: boolean, spa: string | null,
 *   memoryBudget: number, memoryFileLimit: number, watch: boolean, dictionaries: boolean, immutableHashed: boolean,
 *   maxManifestBytes: number, onWarning: ((message: string) => void) | null,
 * }} ServeOptions
 */

/** The default `onWarning`. @param {string} message */
const warnOnConsole = (message) => console.warn(message);

/**
 * The SPA shell's path from `options.spa`: true is `index.html`, false none.
 * @param {unknown} spa
 */
function spaOf(spa) {
  if (spa === true) return 'index.html';
  if (spa === false) return null;
  if (typeof spa === 'string' && spa !== '' && !spa.startsWith('/') && !spa.split('/').includes('..')) return spa;
  throw optionError('options.spa', 'a boolean or a file path relative to root', spa);
}

/**
 * Validate and fill the options of `serveStatic(root, options)`; `cacheControl` comes back as the
 * header value, computed once.
 * @param {string} root
 * @param {object | null} [options]
 * @returns {Readonly<ServeOptions>}
 */
export function normalizeServeOptions(root, options = {}) {
  const absRoot = path.resolve(checkRoot(root));
  const o = fillOptions(options ?? {}, SERVE_DEFAULTS);

  let manifest = null;
  if (o.manifest === null || (typeof o.manifest === 'string' && o.manifest !== '')) {
    manifest = path.resolve(absRoot, o.manifest ?? MANIFEST_NAME);
  } else if (o.manifest !== false) {
    throw optionError('options.manifest', 'a non-empty path string or false', o.manifest);
  }

  const enc = o.encodings;
  if (!Array.isArray(enc) || enc.some((e) => !isEncoding(e)) || new Set(enc).size !== enc.length) {
    throw optionError('options.encodings', `an array of distinct encodings among ${ENCODING_NAMES.join(', ')}`, enc);
  }
  if (!['ignore', 'deny', 'allow'].includes(o.dotfiles)) {
    throw optionError('options.dotfiles', '"ignore", "deny" or "allow"', o.dotfiles);
  }
  const key = o.maxAge || !o.maxage ? 'maxAge' : 'maxage';
  const maxAge = parseDuration(o[key]);
  if (Number.isNaN(maxAge)) {
    throw optionError(`options.${key}`, 'a number of milliseconds or a duration string like "1d"', o[key]);
  }
  const cacheControl = bool(o, 'cacheControl')
    ? `public, max-age=${Math.floor(maxAge / 1000)}${bool(o, 'immutable') ? ', immutable' : ''}`
    : (bool(o, 'immutable'), null);
  const onWarning = o.onWarning === undefined ? warnOnConsole : o.onWarning;
  if (onWarning !== null && typeof onWarning !== 'function') {
    throw optionError('options.onWarning', 'a function or null', o.onWarning);
  }
  if (o.setHeaders !== null && typeof o.setHeaders !== 'function') {
    throw optionError('options.setHeaders', 'a function', o.setHeaders);
  }
  const spa = spaOf(o.spa);

  return Object.freeze({
    root: absRoot,
    manifest,
    unlisted: bool(o, 'unlisted') || manifest === null,
    encodings: Object.freeze([...enc]),
    index: names(o, 'index', { strip: false, subpaths: true }),
    dotfiles: o.dotfiles,
    etag: bool(o, 'etag'),
    lastModified: bool(o, 'lastModified'),
    cacheControl,
    acceptRanges: bool(o, 'acceptRanges'),
    setHeaders: o.setHeaders,
    fallthrough: bool(o, 'fallthrough'),
    redirect: bool(o, 'redirect'),
    extensionsFirst: bool(o, 'extensionsFirst'),
    extensions: names(o, 'extensions', { strip: true, subpaths: false }),
    spa,
    memoryBudget: byteCount(o, 'memoryBudget'),
    memoryFileLimit: o.memoryFileLimit === null ? Math.floor(o.memoryBudget / 4) : byteCount(o, 'memoryFileLimit'),
    watch: bool(o, 'watch'),
    dictionaries: bool(o, 'dictionaries'),
    immutableHashed: bool(o, 'immutableHashed'),
    maxManifestBytes: byteCount(o, 'maxManifestBytes', 1),
    onWarning,
  });
}

/**
 * The limits of the preview server, in milliseconds (0 turns a timeout off; docs/serve.md): without
 * them, clients that never read held their sockets and files open until descriptors ran out.
 */
export const PREVIEW_LIMITS = Object.freeze({
  timeout: 30_000, headersTimeout: 20_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, maxConnections: 500,
});

/**
 * Validate and fill the limits (pure): durations are milliseconds or strings read by `ms` ("30s").
 * @param {Partial<Record<keyof typeof PREVIEW_LIMITS, unknown>>} given
 * @returns {Record<keyof typeof PREVIEW_LIMITS, number>}
 */
export function previewLimits(given) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const [k, def] of Object.entries(PREVIEW_LIMITS)) {
    const v = given[/** @type {keyof typeof PREVIEW_LIMITS} */ (k)] ?? def;
    if (k === 'maxConnections') {
      if (!Number.isSafeInteger(v) || /** @type {number} */ (v) < 1) {
        throw optionError(`options.${k}`, 'a positive integer', v);
      }
      out[k] = /** @type {number} */ (v);
      continue;
    }
    const ms = typeof v === 'number' || typeof v === 'string' ? parseDuration(v) : NaN;
    if (Number.isNaN(ms)) {
      throw optionError(`options.${k}`, 'a number of milliseconds or a duration string like "30s"', v);
    }
    out[k] = Math.round(ms);
  }
  // node:http requires the head's deadline within the whole request's
  if (out.requestTimeout > 0 && out.headersTimeout > out.requestTimeout) {
    const expected = `at most options.requestTimeout (${out.requestTimeout} ms)`;
    throw optionError('options.headersTimeout', expected, given.headersTimeout ?? out.headersTimeout);
  }
  return /** @type {any} */ (out);
}
