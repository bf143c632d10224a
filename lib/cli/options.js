import { OPTION_DEFAULTS } from '../options.js';

/**
 * The CLI flags of `precompressor <dir>`, each mapped to its API option. `--help` is built from
 * this table and a test checks that the README's options table lists the same flags and defaults.
 */
export const CLI_FLAGS = Object.freeze([
  { flag: 'include', option: 'include', type: 'array', default: OPTION_DEFAULTS.include.join(' '), describe: 'Glob of files to compress, relative to <dir>; repeatable' },
  { flag: 'exclude', option: 'exclude', type: 'array', default: '', describe: 'Glob of files not to compress (still listed in the manifest); repeatable' },
  { flag: 'skip-extensions', option: 'skipExtensions', type: 'string', default: '(built-in list)', describe: 'Comma-separated extensions of already-compressed formats to skip; replaces the built-in list ("" skips none)' },
  { flag: 'encodings', option: 'encodings', type: 'string', default: OPTION_DEFAULTS.encodings.join(','), describe: 'Comma-separated encodings to write: br, zstd, gzip' },
  { flag: 'zstd', option: 'encodings', type: 'boolean', default: false, describe: 'Also write .zst (zstd) variants: shorthand that adds zstd to --encodings' },
  { flag: 'brotli-quality', option: 'brotliQuality', type: 'number', default: OPTION_DEFAULTS.brotliQuality, describe: 'Brotli quality, 0-11' },
  { flag: 'gzip-level', option: 'gzipLevel', type: 'number', default: OPTION_DEFAULTS.gzipLevel, describe: 'gzip level, 1-9' },
  { flag: 'zstd-level', option: 'zstdLevel', type: 'number', default: OPTION_DEFAULTS.zstdLevel, describe: 'zstd level, 1-19 (the window is capped at 8 MB for HTTP whatever the level)' },
  { flag: 'zopfli', option: 'zopfli', type: 'boolean', default: OPTION_DEFAULTS.zopfli, describe: 'Write the .gz variants with zopfli: typically 4-8 % smaller than gzip 9, much slower' },
  { flag: 'min-ratio', option: 'minRatio', type: 'number', default: OPTION_DEFAULTS.minRatio, describe: 'Keep a variant only if compressed < original × ratio (0 < ratio ≤ 1)' },
  { flag: 'concurrency', option: 'concurrency', type: 'number', default: '(cores)', describe: 'Files compressed at once; default os.availableParallelism()' },
  { flag: 'manifest', option: 'manifest', type: 'string', default: '<dir>/precompressor-manifest.json', describe: 'Where to write the manifest' },
  { flag: 'dotfiles', option: 'dotfiles', type: 'boolean', default: false, describe: 'Also take files and folders whose name starts with a dot' },
  { flag: 'force', option: 'force', type: 'boolean', default: false, describe: 'Ignore the manifest and the variant cache and compress everything again (the cache is still filled)' },
  { flag: 'dry-run', option: 'dryRun', type: 'boolean', default: false, describe: 'Say what would change without writing anything' },
  { flag: 'cache', option: 'cache', type: 'boolean', default: OPTION_DEFAULTS.cache, describe: 'Take variants already made (by any build sharing the cache folder) from the variant cache; --no-cache bypasses it' },
  { flag: 'cache-dir', option: 'cacheDir', type: 'string', default: 'node_modules/.cache/precompressor/variants', describe: 'The variant cache folder (persist it in CI; see docs/cache.md)' },
  { flag: 'cache-max-size', option: 'cacheMaxSize', type: 'string', default: '512MiB', describe: 'Cap of the variant cache (bytes, or 500MB, 1GiB...); least recently used entries go first' },
  { flag: 'deltas', option: 'deltas', type: 'boolean', default: OPTION_DEFAULTS.deltas, describe: 'Deploy deltas (RFC 9842, dcz/dcb) against earlier versions of each file; --no-deltas turns them off' },
  { flag: 'site-dictionary', option: 'siteDictionary', type: 'boolean', default: OPTION_DEFAULTS.siteDictionary, describe: 'A dictionary made from the HTML pages, and each page as dcz/dcb against it; --no-site-dictionary turns it off' },
  { flag: 'previous', option: 'previous', type: 'string', default: '', describe: 'An older build folder whose files are also taken as earlier versions' },
  { flag: 'dictionary-store', option: 'dictionaryStore', type: 'string', default: 'node_modules/.cache/precompressor/dictionaries', describe: 'Where earlier versions are kept across builds (persist it in CI)' },
  { flag: 'dictionary-versions', option: 'dictionaryVersions', type: 'number', default: OPTION_DEFAULTS.dictionaryVersions, describe: 'Earlier versions per file kept and used as dictionaries, 1-100' },
  { flag: 'delta-margin', option: 'deltaMargin', type: 'number', default: OPTION_DEFAULTS.deltaMargin, describe: 'Keep a delta only if smaller than the best variant × (1 − margin)' },
  { flag: 'allow-system-dir', option: 'allowSystemDir', type: 'boolean', default: false, describe: 'Compress <dir> even when it is /, the home folder or a system folder (/usr, /etc, /var...), which are refused by default' },
  { flag: 'hash-pattern', option: 'hashPattern', type: 'string', default: '', describe: 'RegExp with a group (?<hash>...) that finds the hash in a file name (default: Vite/Rollup, webpack, esbuild names)' },
]);

/** Output flags of the CLI that are not API options. */
export const CLI_OUTPUT_FLAGS = Object.freeze([
  { flag: 'quiet', type: 'boolean', default: false, describe: 'Print nothing but errors' },
  { flag: 'json', type: 'boolean', default: false, describe: 'Print the machine-readable report on stdout' },
  { flag: 'watch', type: 'boolean', default: false, describe: 'After the first pass, keep watching <dir> and recompress what changes' },
]);

/**
 * API options from parsed CLI arguments: only flags the user gave, so that defaults live in one
 * place (normalizeOptions).
 * @param {Record<string, unknown>} argv
 * @returns {import('../types.js').PrecompressOptions} as typed; normalizeOptions() checks the values
 */
export function apiOptionsFromArgv(argv) {
  /** @type {Record<string, unknown> & { encodings?: string[] }} */
  const out = {};
  for (const f of CLI_FLAGS) {
    const v = argv[f.flag];
    if (v === undefined) continue;
    if (f.flag === 'zstd') {
      if (v === true) out.encodings = [...new Set([...(out.encodings ?? OPTION_DEFAULTS.encodings), 'zstd'])];
    } else if (f.option === 'encodings') out.encodings = String(v).split(',').map((s) => s.trim()).filter(Boolean);
    else if (f.option === 'skipExtensions') out.skipExtensions = String(v).split(',').map((s) => s.trim()).filter(Boolean);
    else if (f.option === 'include' || f.option === 'exclude') out[f.option] = /** @type {unknown[]} */ (v).map(String);
    else out[f.option] = v;
  }
  return /** @type {import('../types.js').PrecompressOptions} */ (out);
}

/**
 * An error message from the library, worded for the command line: `options.minRatio` becomes
 * `--min-ratio` for every option that one of `flags` sets (pure).
 * @param {string} message
 * @param {readonly { flag: string, option: string | null }[]} flags
 */
export function withFlagNames(message, flags) {
  return message.replace(/\boptions\.(\w+)/g, (m, name) => {
    const f = flags.find((x) => x.option === name);
    return f ? `--${f.flag}` : m;
  });
}
