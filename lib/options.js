import os from 'node:os';
import path from 'node:path';
import { optionError } from './errors.js';
import { cacheRoot } from './paths.js';

/**
 * @typedef {'br' | 'gzip' | 'zstd'} Encoding
 * @typedef {(progress: import('./format.js').Progress) => void} OnProgress
 * @typedef {Readonly<{ root: string, encodings: readonly Encoding[], brotliQuality: number, gzipLevel: number,
 *   zstdLevel: number, zopfli: boolean, include: readonly string[], exclude: readonly string[],
 *   skipExtensions: ReadonlySet<string>, minRatio: number, concurrency: number, manifest: string, dotfiles: boolean,
 *   force: boolean, dryRun: boolean, streamThreshold: number, onProgress: OnProgress | null, cache: boolean,
 *   cacheDir: string, cacheMaxSize: number, deltas: boolean, siteDictionary: boolean, previous: string | null, dictionaryStore: string,
 *   dictionaryVersions: number, deltaMinSize: number, deltaMargin: number, deltaExtensions: ReadonlySet<string>,
 *   hashPattern: RegExp | HashSpan | null, allowSystemDir: boolean }>} Options the normalized options of `precompress()`
 * @typedef {(path: string) => [number, number] | null | undefined} HashSpan where a file's hash is in its base name
 */

/** Encodings we can write, in server-preference order, with their file suffix. */
export const ENCODINGS = Object.freeze({
  br: '.br',
  zstd: '.zst',
  gzip: '.gz',
});

/** The manifest's default file name, inside the compressed folder. */
/** Highest level whose window fits 8 MB without setting the window explicitly. */
export const ZSTD_MAX_LEVEL = 19;

export const MANIFEST_NAME = 'precompressor-manifest.json';

/** Extensions whose files get a dictionary family and deploy deltas by default (see lib/compress/delta.js). */
export const DELTA_EXTENSIONS = Object.freeze(['js', 'mjs', 'cjs', 'css', 'wasm', 'json', 'html', 'htm']);

/**
 * The default folders of the variant cache and of the dictionary store, under cacheRoot() (see
 * lib/paths.js: node_modules/.cache/precompressor of the project, found from `from`).
 * @param {string} [from] default: the working directory
 */
export const defaultCacheDir = (from) => path.join(cacheRoot(from), 'variants');
/** @param {string} [from] */
export const defaultDictionaryStore = (from) => path.join(cacheRoot(from), 'dictionaries');

/** Default cap of the variant cache, in bytes; least recently used entries go first. */
export const CACHE_MAX_SIZE = 512 * 1024 * 1024;

/**
 * Extensions of formats that are already compressed (images, fonts, audio, video, archives,
 * office documents): compressing them again costs CPU and saves nothing.
 */
export const DEFAULT_SKIP_EXTENSIONS = Object.freeze([
  // images
  'png', 'apng', 'jpg', 'jpeg', 'jfif', 'pjpeg', 'gif', 'webp', 'avif', 'heic', 'heif', 'jxl',
  // fonts (woff is zlib inside, woff2 is brotli inside)
  'woff', 'woff2',
  // audio and video
  'mp3', 'mp4', 'm4a', 'm4v', 'aac', 'ogg', 'oga', 'ogv', 'opus', 'flac', 'webm', 'mov', 'mkv', 'avi',
  // archives and compressed streams
  'zip', 'gz', 'tgz', 'br', 'zst', 'bz2', 'xz', 'lz', 'lz4', 'lzma', '7z', 'rar', 'jar', 'apk',
  // zip-based documents
  'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub',
]);

/**
 * Every option of `precompress()`, with its default. The CLI builds its flags and `--help`
 * from this table too, so the README, the CLI and the API cannot drift.
 */
export const OPTION_DEFAULTS = Object.freeze({
  encodings: Object.freeze(['br', 'gzip']),
  brotliQuality: 11,
  gzipLevel: 9,
  zstdLevel: 19,
  zopfli: false,
  include: Object.freeze(['**/*']),
  exclude: Object.freeze([]),
  skipExtensions: DEFAULT_SKIP_EXTENSIONS,
  minRatio: 1,
  concurrency: null, // os.availableParallelism()
  manifest: null, // <dir>/precompressor-manifest.json
  dotfiles: false,
  force: false,
  dryRun: false,
  streamThreshold: 64 * 1024 * 1024,
  onProgress: null,
  cache: true, // take variants from the content-addressed cache, and add new ones to it
  cacheDir: null, // node_modules/.cache/precompressor/variants of the project (see cacheRoot() in lib/paths.js)
  cacheMaxSize: CACHE_MAX_SIZE, // bytes (or a string such as "512MB"): least recently used entries are evicted above it
  deltas: true, // deploy deltas (RFC 9842) against earlier versions, where this Node can encode them
  siteDictionary: true, // a dictionary made from the site's HTML pages, and each page's dcz/dcb against it
  previous: null, // an older build folder whose files are also taken as dictionaries
  dictionaryStore: null, // node_modules/.cache/precompressor/dictionaries of the project (see cacheRoot() in lib/paths.js)
  dictionaryVersions: 3, // earlier versions per family kept in the store and used as dictionaries
  deltaMinSize: 1024,
  deltaMargin: 0.1, // a delta is kept only if at least this much smaller than the best variant
  deltaExtensions: DELTA_EXTENSIONS,
  hashPattern: null, // RegExp with a group `hash` matched on base names, or (path) => [start, end] in the base name | null | undefined; default: Vite/Rollup, webpack, esbuild names
  allowSystemDir: false, // compress `/`, the home folder or a system folder (see lib/compress/guards.js) anyway
});

/** @param {unknown} v @returns {v is number} */
function isInt(v) {
  return typeof v === 'number' && Number.isInteger(v);
}

/**
 * @param {string} name
 * @param {unknown} value
 * @returns {readonly string[]}
 */
function stringList(name, value) {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s === '')) {
    throw optionError(name, 'a string or an array of non-empty strings', value);
  }
  return Object.freeze([...list]);
}

/**
 * The options object merged over `defaults` (an `undefined` value keeps the default), after
 * checking that it is an object with only known keys. Shared by every normalizer.
 * @template {Record<string, unknown>} T
 * @param {unknown} options
 * @param {T} defaults
 * @returns {Record<string, any>}
 */
export function fillOptions(options, defaults) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw optionError('options', 'an object', options);
  const o = /** @type {Record<string, any>} */ ({ ...defaults });
  for (const [k, v] of Object.entries(options)) {
    if (!Object.hasOwn(defaults, k)) throw optionError(`options.${k}`, `one of the known options (${Object.keys(defaults).join(', ')})`, k);
    if (v !== undefined) o[k] = v;
  }
  return o;
}

/**
 * Split the options of an integration (watch, the Vite plugin) into the compressor's (returned
 * as given, for normalizeOptions) and its own (filled from `ownDefaults`, for it to validate).
 * An unknown key is reported against both lists, with the one error template.
 * @template {Record<string, unknown>} T
 * @param {object} options
 * @param {T} ownDefaults
 * @returns {{ api: Record<string, unknown>, own: T }}
 */
export function splitOptions(options, ownDefaults) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw optionError('options', 'an object', options);
  /** @type {Record<string, unknown>} */
  const api = {};
  const own = /** @type {any} */ ({ ...ownDefaults });
  for (const [k, v] of Object.entries(options)) {
    if (Object.hasOwn(ownDefaults, k)) {
      if (v !== undefined) own[k] = v;
    } else if (Object.hasOwn(OPTION_DEFAULTS, k)) {
      api[k] = v;
    } else {
      const known = [...Object.keys(OPTION_DEFAULTS), ...Object.keys(ownDefaults)].join(', ');
      throw optionError(`options.${k}`, `one of the known options (${known})`, k);
    }
  }
  return { api, own };
}

/**
 * The `encodings` option: a non-empty list of known encodings.
 * @param {unknown} value
 * @returns {readonly Encoding[]}
 */
function encodingList(value) {
  const encodings = stringList('options.encodings', value);
  for (const e of encodings) {
    if (!Object.hasOwn(ENCODINGS, e)) throw optionError('options.encodings', `a list of ${Object.keys(ENCODINGS).join(', ')}`, value);
  }
  if (encodings.length === 0) throw optionError('options.encodings', 'a non-empty list', value);
  return /** @type {readonly Encoding[]} */ (encodings);
}

/**
 * Validate and fill the options of `precompress(dir, options)`. Returns a frozen object;
 * nothing downstream re-checks or re-defaults.
 * @param {string} dir
 * @param {object} [options]
 * @returns {Options}
 */
export function normalizeOptions(dir, options = {}) {
  if (typeof dir !== 'string' || dir === '') throw optionError('dir', 'a non-empty string', dir);
  const o = fillOptions(options, OPTION_DEFAULTS);
  const encodings = encodingList(o.encodings);
  if (!isInt(o.brotliQuality) || o.brotliQuality < 0 || o.brotliQuality > 11) {
    throw optionError('options.brotliQuality', 'an integer from 0 to 11', o.brotliQuality);
  }
  if (!isInt(o.gzipLevel) || o.gzipLevel < 1 || o.gzipLevel > 9) {
    throw optionError('options.gzipLevel', 'an integer from 1 to 9', o.gzipLevel);
  }
  // Levels 20-22 exist to use windows above 8 MB, which HTTP forbids (RFC 9659).
  if (!isInt(o.zstdLevel) || o.zstdLevel < 1 || o.zstdLevel > ZSTD_MAX_LEVEL) {
    throw optionError('options.zstdLevel', `an integer from 1 to ${ZSTD_MAX_LEVEL}`, o.zstdLevel);
  }
  if (typeof o.minRatio !== 'number' || !(o.minRatio > 0 && o.minRatio <= 1)) {
    throw optionError('options.minRatio', 'a number greater than 0 and at most 1', o.minRatio);
  }
  const concurrency = o.concurrency ?? os.availableParallelism();
  if (!isInt(concurrency) || concurrency < 1) {
    throw optionError('options.concurrency', 'a positive integer', o.concurrency);
  }
  for (const k of ['zopfli', 'dotfiles', 'force', 'dryRun', 'allowSystemDir']) {
    if (typeof o[k] !== 'boolean') throw optionError(`options.${k}`, 'a boolean', o[k]);
  }
  if (!isInt(o.streamThreshold) || o.streamThreshold < 1) {
    throw optionError('options.streamThreshold', 'a positive integer (bytes)', o.streamThreshold);
  }
  if (o.onProgress !== null && typeof o.onProgress !== 'function') {
    throw optionError('options.onProgress', 'a function', o.onProgress);
  }
  if (o.manifest !== null && (typeof o.manifest !== 'string' || o.manifest === '')) {
    throw optionError('options.manifest', 'a non-empty path string', o.manifest);
  }
  const skip = typeof o.skipExtensions === 'string' ? o.skipExtensions.split(',').filter(Boolean) : o.skipExtensions;
  const skipExtensions = stringList('options.skipExtensions', skip).map((e) => e.replace(/^\./, '').toLowerCase());

  const root = path.resolve(dir);
  return Object.freeze({
    ...deltaOptions(o),
    ...cacheOptions(o),
    root,
    encodings: Object.freeze(/** @type {Encoding[]} */ (Object.keys(ENCODINGS)).filter((e) => encodings.includes(e))),
    brotliQuality: o.brotliQuality,
    gzipLevel: o.gzipLevel,
    zstdLevel: o.zstdLevel,
    zopfli: o.zopfli,
    include: stringList('options.include', o.include),
    exclude: stringList('options.exclude', o.exclude),
    skipExtensions: Object.freeze(new Set(skipExtensions)),
    minRatio: o.minRatio,
    concurrency,
    manifest: path.resolve(root, o.manifest ?? MANIFEST_NAME),
    dotfiles: o.dotfiles,
    force: o.force,
    dryRun: o.dryRun,
    streamThreshold: o.streamThreshold,
    onProgress: o.onProgress,
    allowSystemDir: o.allowSystemDir,
  });
}

/** @type {Record<string, number>} */
const SIZE_UNITS = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/**
 * A size in bytes from a number or a string such as "512MB", "1.5 GiB", "2000000"; null when invalid.
 * @param {unknown} v
 */
export function parseSize(v) {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : null;
  if (typeof v !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(v);
  return m ? Math.round(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]) : null;
}

/**
 * The variant cache's options of `precompress()`, validated and filled (part of normalizeOptions()).
 * @param {Record<string, any>} o
 */
function cacheOptions(o) {
  if (typeof o.cache !== 'boolean') throw optionError('options.cache', 'a boolean', o.cache);
  if (o.cacheDir !== null && (typeof o.cacheDir !== 'string' || o.cacheDir === '')) throw optionError('options.cacheDir', 'a non-empty path string', o.cacheDir);
  const cacheMaxSize = parseSize(o.cacheMaxSize);
  if (cacheMaxSize === null) throw optionError('options.cacheMaxSize', 'a size in bytes (a non-negative integer, or a string such as "512MB")', o.cacheMaxSize);
  return { cache: o.cache, cacheDir: path.resolve(o.cacheDir ?? defaultCacheDir()), cacheMaxSize };
}

/**
 * The deploy-delta options of `precompress()`, validated and filled (part of normalizeOptions()).
 * @param {Record<string, any>} o
 */
function deltaOptions(o) {
  for (const k of ['deltas', 'siteDictionary']) if (typeof o[k] !== 'boolean') throw optionError(`options.${k}`, 'a boolean', o[k]);
  for (const k of ['previous', 'dictionaryStore']) {
    if (o[k] !== null && (typeof o[k] !== 'string' || o[k] === '')) throw optionError(`options.${k}`, 'a non-empty path string', o[k]);
  }
  if (!isInt(o.dictionaryVersions) || o.dictionaryVersions < 1 || o.dictionaryVersions > 100) {
    throw optionError('options.dictionaryVersions', 'an integer from 1 to 100', o.dictionaryVersions);
  }
  if (!Number.isSafeInteger(o.deltaMinSize) || o.deltaMinSize < 0) throw optionError('options.deltaMinSize', 'a non-negative integer (bytes)', o.deltaMinSize);
  if (typeof o.deltaMargin !== 'number' || !(o.deltaMargin >= 0 && o.deltaMargin < 1)) {
    throw optionError('options.deltaMargin', 'a number from 0 to less than 1', o.deltaMargin);
  }
  const ext = typeof o.deltaExtensions === 'string' ? o.deltaExtensions.split(',').filter(Boolean) : o.deltaExtensions;
  const deltaExtensions = stringList('options.deltaExtensions', ext).map((e) => e.replace(/^\./, '').toLowerCase());
  let hashPattern = o.hashPattern;
  if (typeof hashPattern === 'string' && hashPattern !== '') {
    try {
      hashPattern = new RegExp(hashPattern);
    } catch {
      throw optionError('options.hashPattern', 'a valid regular expression', o.hashPattern);
    }
  }
  if (hashPattern !== null && typeof hashPattern !== 'function' && !(hashPattern instanceof RegExp && /\(\?<hash>/.test(hashPattern.source))) {
    throw optionError('options.hashPattern', 'a RegExp (or its source) with a named group (?<hash>...), or a function', o.hashPattern);
  }
  return {
    deltas: o.deltas,
    siteDictionary: o.siteDictionary,
    previous: o.previous === null ? null : path.resolve(o.previous),
    dictionaryStore: path.resolve(o.dictionaryStore ?? defaultDictionaryStore()),
    dictionaryVersions: o.dictionaryVersions,
    deltaMinSize: o.deltaMinSize,
    deltaMargin: o.deltaMargin,
    deltaExtensions: Object.freeze(new Set(deltaExtensions)),
    hashPattern,
  };
}

/**
 * The settings that change what a variant contains. Recorded in the manifest; a change
 * invalidates every cached variant.
 * @param {Options} opts
 */
export function settingsOf(opts) {
  return {
    encodings: [...opts.encodings],
    brotliQuality: opts.brotliQuality,
    gzipLevel: opts.gzipLevel,
    zstdLevel: opts.zstdLevel,
    zopfli: opts.zopfli,
    minRatio: opts.minRatio,
  };
}
