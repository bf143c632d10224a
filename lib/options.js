import os from 'node:os';
import path from 'node:path';
import { optionError, PrecompressorError } from './errors.js';
import { cacheRoot } from './paths.js';
import { DEFAULT_ENCODINGS, ENCODINGS, ENCODING_NAMES, isEncoding } from './encodings.js';

/**
 * @typedef {import('./encodings.js').Encoding} Encoding
 * @typedef {(progress: import('./util/format.js').Progress) => void} OnProgress
 * @typedef {Readonly<{ root: string, encodings: readonly Encoding[], brotliQuality: number, gzipLevel: number,
 *   zstdLevel: number, zopfli: boolean, include: readonly string[], exclude: readonly string[],
 *   skipExtensions: ReadonlySet<string>, minRatio: number, concurrency: number, manifest: string, dotfiles: boolean,
 *   force: boolean, dryRun: boolean, streamThreshold: number, onProgress: OnProgress | null, cache: boolean,
 *   cacheDir: string, cacheMaxSize: number, deltas: boolean, siteDictionary: boolean, previous: string | null,
 *   dictionaryStore: string,
 *   dictionaryVersions: number, deltaMinSize: number,
 *   cacheUrl: string | null, cacheUrlReadOnly: boolean,
 *   cacheHeaders: Readonly<Record<string, string>>, deltaMargin: number, deltaExtensions: ReadonlySet<string>,
 *   hashPattern: RegExp | HashSpan | null, allowSystemDir: boolean, shard: Shard | null,
 *   serverConfig: string | null }>} Options
 *   the normalized options of `precompress()`
 * @typedef {(path: string) => [number, number] | null | undefined} HashSpan where a file's hash is in its base name
 * @typedef {{ index: number, count: number }} Shard `--shard <index>/<count>`, index from 1
 *   (lib/compress/plan/shard.js)
 */

/** The manifest's default file name, inside the compressed folder. */
export const MANIFEST_NAME = 'precompressor-manifest.json';

/**
 * The warm index's suffix: `<manifest>.pcindex` beside the manifest (lib/compress/pass/warm-index.js), a
 * cache of what a re-run needs of it. Never served, never listed (lib/site-policy.js `index`).
 */
export const MANIFEST_INDEX_SUFFIX = '.pcindex';

/** Extensions whose files get a dictionary family and deploy deltas by default (lib/compress/dictionaries/). */
const DELTA_EXTENSIONS = Object.freeze(['js', 'mjs', 'cjs', 'css', 'wasm', 'json', 'html', 'htm']);

/**
 * The default folders of the variant cache and of the dictionary store, under cacheRoot().
 * @param {string} [from] default: the working directory
 */
export const defaultCacheDir = (from) => path.join(cacheRoot(from), 'variants');
/** @param {string} [from] */
export const defaultDictionaryStore = (from) => path.join(cacheRoot(from), 'dictionaries');

/** Default cap of the variant cache, in bytes; least recently used entries go first. */
const CACHE_MAX_SIZE = 512 * 1024 * 1024;

/**
 * Extensions of formats already compressed: compressing them again costs CPU and saves nothing.
 */
export const DEFAULT_SKIP_EXTENSIONS = Object.freeze([...new Set([
  'png', 'apng', 'jpg', 'jpeg', 'jfif', 'pjpeg', 'gif', 'webp', 'avif', 'heic', 'heif', 'jxl',
  // fonts (woff is zlib inside, woff2 is brotli inside)
  'woff', 'woff2',
  'mp3', 'mp4', 'm4a', 'm4v', 'aac', 'ogg', 'oga', 'ogv', 'opus', 'flac', 'webm', 'mov', 'mkv', 'avi',
  // archives and compressed streams (and our own variants' suffixes, below)
  'zip', 'gz', 'tgz', 'zst', 'bz2', 'xz', 'lz', 'lz4', 'lzma', '7z', 'rar', 'jar', 'apk',
  'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub',
  ...ENCODINGS.map((e) => e.suffix.slice(1)),
])]);

/**
 * @typedef {{ default: unknown, describe: string,
 *   flag?: { type: 'array' | 'string' | 'number' | 'boolean', shown?: string } }} OptionSpec
 *   flag: the option's CLI flag (`--` and its name in kebab case), the type yargs reads, and the default as
 *   `--help` and the README show it when that is not the value itself
 */

/**
 * @param {unknown} dflt
 * @param {string} describe
 * @param {'array' | 'string' | 'number' | 'boolean'} [type] of the CLI flag; none: an API-only option
 * @param {string} [shown] the default as `--help` and the README show it, when not the value itself
 * @returns {OptionSpec}
 */
const opt = (dflt, describe, type, shown) =>
  ({ default: dflt, describe, ...(type ? { flag: { type, ...(shown ? { shown } : {}) } } : {}) });

/**
 * Every option of `precompress()`: OPTION_DEFAULTS, the CLI's flags, `--help` and the README's table come from it.
 * @type {Readonly<Record<string, Readonly<OptionSpec>>>}
 */
export const OPTIONS = Object.freeze({
  include: opt(Object.freeze(['**/*']), 'Glob of files to compress, relative to <dir>; repeatable', 'array'),
  exclude: opt(Object.freeze([]), 'Glob of files not to compress (still listed in the manifest); repeatable', 'array'),
  skipExtensions: opt(DEFAULT_SKIP_EXTENSIONS, 'Comma-separated extensions of already-compressed formats to skip; ' +
    'replaces the built-in list ("" skips none)', 'string', '(built-in list)'),
  encodings: opt(DEFAULT_ENCODINGS, `Comma-separated encodings to write: ${ENCODING_NAMES.join(', ')}`, 'string'),
  ...Object.fromEntries(ENCODINGS.map(({ level: l }) => [l.option, opt(l.default, l.describe, 'number')])),
  zopfli: opt(false, 'Write the .gz variants with zopfli: typically 4-8 % smaller than gzip 9, much slower', 'boolean'),
  minRatio: opt(1, 'Keep a variant only if compressed < original × ratio (0 < ratio ≤ 1)', 'number'),
  concurrency: opt(null, 'Files compressed at once; default os.availableParallelism()', 'number', '(cores)'),
  manifest: opt(null, 'Where to write the manifest', 'string', '<dir>/precompressor-manifest.json'),
  dotfiles: opt(false, 'Also take files and folders whose name starts with a dot', 'boolean'),
  force: opt(false, 'Ignore the manifest and the variant cache and compress everything again ' +
    '(the cache is still filled)', 'boolean'),
  dryRun: opt(false, 'Say what would change without writing anything', 'boolean'),
  streamThreshold: opt(64 * 1024 * 1024, 'Files at least this big (bytes) are streamed instead of read whole'),
  onProgress: opt(null, 'Called at most every 100 ms with files, bytes, estimated work done/total ' +
    'and the files running'),
  cache: opt(true, 'Take variants already made (by any build sharing the cache folder) from the variant cache; ' +
    '--no-cache bypasses it', 'boolean'),
  cacheDir: opt(null, 'The variant cache folder (persist it in CI; see docs/cache.md)', 'string',
    'node_modules/.cache/precompressor/variants'),
  cacheMaxSize: opt(CACHE_MAX_SIZE, 'Cap of the variant cache (bytes, or 500MB, 1GiB...); ' +
    'least recently used entries go first', 'string', '512MiB'),
  cacheUrl: opt(null, 'A remote cache shared by machines, after the local one (Bazel HTTP cache: bazel-remote, ' +
    'nginx WebDAV...); also PRECOMPRESSOR_CACHE_URL; a token only from PRECOMPRESSOR_CACHE_TOKEN (docs/cache.md)',
  'string'),
  cacheUrlReadOnly: opt(false, 'Only read the remote cache, never write it (untrusted branches)', 'boolean'),
  shard: opt(null, 'Compress only slice i of n ("1/4"), balanced by work, into the caches; no manifest, ' +
    'no deltas: a normal run after all n takes every variant from the cache (docs/ci.md)', 'string'),
  deltas: opt(true, 'Deploy deltas (RFC 9842, dcz/dcb) against earlier versions of each file; ' +
    '--no-deltas turns them off', 'boolean'),
  siteDictionary: opt(true, 'A dictionary made from the HTML pages, and each page as dcz/dcb against it; ' +
    '--no-site-dictionary turns it off', 'boolean'),
  previous: opt(null, 'An older build folder whose files are also taken as earlier versions', 'string'),
  dictionaryStore: opt(null, 'Where earlier versions are kept across builds (persist it in CI)', 'string',
    'node_modules/.cache/precompressor/dictionaries'),
  dictionaryVersions: opt(3, 'Earlier versions per file kept and used as dictionaries, 1-100', 'number'),
  deltaMinSize: opt(1024, 'Files smaller than this (bytes) get no deltas'),
  deltaMargin: opt(0.1, 'Keep a delta only if smaller than the best variant × (1 − margin)', 'number'),
  deltaExtensions: opt(DELTA_EXTENSIONS, 'Extensions that get deltas (array, or comma-separated)'),
  allowSystemDir: opt(false, 'Compress <dir> even when it is /, the home folder or a system folder ' +
    '(/usr, /etc, /var...), which are refused by default', 'boolean'),
  hashPattern: opt(null, 'RegExp with a group (?<hash>...) that finds the hash in a file name ' +
    '(default: Vite/Rollup, webpack, esbuild names)', 'string'),
  serverConfig: opt(null, 'After each build, write the nginx and Caddy configurations of <dir> into this folder ' +
    '(outside <dir>; docs/servers.md)', 'string'),
});

export const OPTION_DEFAULTS = Object.freeze(
  Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, o.default])),
);

/** @param {unknown} v @returns {v is number} */
function isInt(v) {
  return typeof v === 'number' && Number.isInteger(v);
}

/**
 * The items of a comma-separated list (`"br, gzip"`), trimmed, empty ones dropped.
 * @param {unknown} value
 */
export function commaList(value) {
  return String(value).split(',').map((s) => s.trim()).filter(Boolean);
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
 * The options merged over `defaults` (`undefined` keeps the default), once checked to have only known keys.
 * @template {Record<string, unknown>} T
 * @param {unknown} options
 * @param {T} defaults
 * @returns {Record<string, any>}
 */
export function fillOptions(options, defaults) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw optionError('options', 'an object', options);
  }
  const o = /** @type {Record<string, any>} */ ({ ...defaults });
  for (const [k, v] of Object.entries(options)) {
    if (!Object.hasOwn(defaults, k)) {
      throw optionError(`options.${k}`, `one of the known options (${Object.keys(defaults).join(', ')})`, k);
    }
    if (v !== undefined) o[k] = v;
  }
  return o;
}

/**
 * Split an integration's options (watch, the Vite plugin) into the compressor's, as given, and its
 * own, filled from `ownDefaults`.
 * @template {Record<string, unknown>} T
 * @param {object} options
 * @param {T} ownDefaults
 * @returns {{ api: Record<string, unknown>, own: T }}
 */
export function splitOptions(options, ownDefaults) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw optionError('options', 'an object', options);
  }
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
 * @param {unknown} value
 * @returns {readonly Encoding[]}
 */
function encodingList(value) {
  const encodings = stringList('options.encodings', value);
  for (const e of encodings) {
    if (!isEncoding(e)) throw optionError('options.encodings', `a list of ${ENCODING_NAMES.join(', ')}`, value);
  }
  if (encodings.length === 0) throw optionError('options.encodings', 'a non-empty list', value);
  return /** @type {readonly Encoding[]} */ (encodings);
}

/**
 * Validate and fill the options of `precompress(dir, options)`: nothing downstream re-checks them.
 * @param {string} dir
 * @param {object} [options]
 * @returns {Options}
 */
export function normalizeOptions(dir, options = {}) {
  if (typeof dir !== 'string' || dir === '') throw optionError('dir', 'a non-empty string', dir);
  const o = fillOptions(options, OPTION_DEFAULTS);
  const encodings = encodingList(o.encodings);
  for (const { level: l } of ENCODINGS) {
    const v = o[l.option];
    if (!isInt(v) || v < l.min || v > l.max) {
      throw optionError(`options.${l.option}`, `an integer from ${l.min} to ${l.max}`, v);
    }
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
  const skip = typeof o.skipExtensions === 'string' ? commaList(o.skipExtensions) : o.skipExtensions;
  const skipExtensions = stringList('options.skipExtensions', skip).map((e) => e.replace(/^\./, '').toLowerCase());

  const root = path.resolve(dir);
  return Object.freeze({
    ...deltaOptions(o),
    ...cacheOptions(o),
    root,
    encodings: Object.freeze(ENCODING_NAMES.filter((e) => encodings.includes(e))),
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
    serverConfig: serverConfigOf(o.serverConfig, root),
  });
}

/**
 * The folder the server configurations are written to: outside the served folder, as they name what
 * is internal there.
 * @param {unknown} v
 * @param {string} root
 */
function serverConfigOf(v, root) {
  if (v === null) return null;
  if (typeof v !== 'string' || v === '') throw optionError('options.serverConfig', 'a non-empty path string', v);
  const out = path.resolve(v);
  if (out === root || out.startsWith(root + path.sep)) {
    throw optionError('options.serverConfig', `a folder outside the served folder ${root}`, v);
  }
  return out;
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
 * A shard from `"<i>/<n>"`, or null when the text is not one (1 ≤ i ≤ n ≤ 10,000).
 * @param {unknown} value
 * @returns {Shard | null}
 */
export function parseShard(value) {
  const m = typeof value === 'string' ? /^\s*(\d{1,5})\s*\/\s*(\d{1,5})\s*$/.exec(value) : null;
  if (m === null) return null;
  const index = Number(m[1]);
  const count = Number(m[2]);
  return index >= 1 && count >= 1 && index <= count && count <= 10_000 ? Object.freeze({ index, count }) : null;
}

/**
 * @param {Record<string, any>} o
 */
function cacheOptions(o) {
  if (typeof o.cache !== 'boolean') throw optionError('options.cache', 'a boolean', o.cache);
  if (o.cacheDir !== null && (typeof o.cacheDir !== 'string' || o.cacheDir === '')) {
    throw optionError('options.cacheDir', 'a non-empty path string', o.cacheDir);
  }
  const cacheMaxSize = parseSize(o.cacheMaxSize);
  if (cacheMaxSize === null) {
    const expected = 'a size in bytes (a non-negative integer, or a string such as "512MB")';
    throw optionError('options.cacheMaxSize', expected, o.cacheMaxSize);
  }
  const shard = o.shard === null ? null : parseShard(o.shard);
  if (o.shard !== null && shard === null) {
    throw optionError('options.shard', 'a slice "<i>/<n>" with 1 <= i <= n <= 10000', o.shard);
  }
  if (shard !== null && (!o.cache || o.dryRun)) {
    // A slice's only product is what it adds to the cache.
    throw optionError('options.shard', 'used with the cache on and without dryRun', o.shard);
  }
  return {
    cache: o.cache, cacheDir: path.resolve(o.cacheDir ?? defaultCacheDir()), cacheMaxSize, shard, ...remoteOptions(o),
  };
}

/**
 * The remote cache's options: headers only from the environment, never a flag (shell history and CI
 * logs keep those), and never in an error message.
 * @param {Record<string, any>} o
 */
function remoteOptions(o) {
  const url = o.cacheUrl ?? (process.env.PRECOMPRESSOR_CACHE_URL || null);
  if (url !== null && (typeof url !== 'string' || !/^https?:\/\/[^/]/i.test(url) || !URL.canParse(url))) {
    throw optionError('options.cacheUrl', 'an http:// or https:// URL', typeof url === 'string' ? '(not one)' : url);
  }
  if (typeof o.cacheUrlReadOnly !== 'boolean') {
    throw optionError('options.cacheUrlReadOnly', 'a boolean', o.cacheUrlReadOnly);
  }
  /** @type {Record<string, string>} */
  const headers = {};
  const extra = process.env.PRECOMPRESSOR_CACHE_HEADERS;
  if (extra) {
    let parsed = null;
    try {
      parsed = JSON.parse(extra);
    } catch {
      // reported below
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) ||
      Object.values(parsed).some((v) => typeof v !== 'string')) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_OPTION',
        'Expected PRECOMPRESSOR_CACHE_HEADERS to be a JSON object of header names to strings (its value is not shown)');
    }
    for (const [k, v] of Object.entries(parsed)) headers[k.toLowerCase()] = v;
  }
  const token = process.env.PRECOMPRESSOR_CACHE_TOKEN;
  if (token) headers.authorization = `Bearer ${token}`;
  return { cacheUrl: url, cacheUrlReadOnly: o.cacheUrlReadOnly, cacheHeaders: Object.freeze(headers) };
}

/**
 * @param {Record<string, any>} o
 */
function deltaOptions(o) {
  for (const k of ['deltas', 'siteDictionary']) {
    if (typeof o[k] !== 'boolean') throw optionError(`options.${k}`, 'a boolean', o[k]);
  }
  for (const k of ['previous', 'dictionaryStore']) {
    if (o[k] !== null && (typeof o[k] !== 'string' || o[k] === '')) {
      throw optionError(`options.${k}`, 'a non-empty path string', o[k]);
    }
  }
  if (!isInt(o.dictionaryVersions) || o.dictionaryVersions < 1 || o.dictionaryVersions > 100) {
    throw optionError('options.dictionaryVersions', 'an integer from 1 to 100', o.dictionaryVersions);
  }
  if (!Number.isSafeInteger(o.deltaMinSize) || o.deltaMinSize < 0) {
    throw optionError('options.deltaMinSize', 'a non-negative integer (bytes)', o.deltaMinSize);
  }
  if (typeof o.deltaMargin !== 'number' || !(o.deltaMargin >= 0 && o.deltaMargin < 1)) {
    throw optionError('options.deltaMargin', 'a number from 0 to less than 1', o.deltaMargin);
  }
  const ext = typeof o.deltaExtensions === 'string' ? commaList(o.deltaExtensions) : o.deltaExtensions;
  const deltaExtensions = stringList('options.deltaExtensions', ext).map((e) => e.replace(/^\./, '').toLowerCase());
  let hashPattern = o.hashPattern;
  if (typeof hashPattern === 'string' && hashPattern !== '') {
    try {
      hashPattern = new RegExp(hashPattern);
    } catch {
      throw optionError('options.hashPattern', 'a valid regular expression', o.hashPattern);
    }
  }
  const named = hashPattern instanceof RegExp && /\(\?<hash>/.test(hashPattern.source);
  if (hashPattern !== null && typeof hashPattern !== 'function' && !named) {
    const expected = 'a RegExp (or its source) with a named group (?<hash>...), or a function';
    throw optionError('options.hashPattern', expected, o.hashPattern);
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
 * The settings that change what a variant contains: recorded in the manifest, a change invalidates the cache.
 * @param {Options} opts
 */
export function settingsOf(opts) {
  // The levels in the order manifests have recorded them (serveStatic's ETags hash this object), then
  // those of encodings added since.
  const ordered = { brotliQuality: opts.brotliQuality, gzipLevel: opts.gzipLevel, zstdLevel: opts.zstdLevel };
  const { zopfli, minRatio } = opts;
  return { encodings: [...opts.encodings], ...ordered, ...levelsOf(opts), zopfli, minRatio };
}

/**
 * Each encoding's level option and its value.
 * @param {Options} opts
 * @returns {Record<string, number>}
 */
function levelsOf(opts) {
  const o = /** @type {Record<string, any>} */ (opts);
  return Object.fromEntries(ENCODINGS.map(({ level }) => [level.option, o[level.option]]));
}
