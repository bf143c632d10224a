import { OPTIONS, OPTION_DEFAULTS, commaList } from '../options.js';
import { ENCODINGS } from '../encodings.js';

const kebab = (/** @type {string} */ name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** @param {import('../options.js').OptionSpec} o the default as `--help` shows it ('' for none) */
const shownDefault = (o) => o.flag?.shown ??
  (Array.isArray(o.default) ? o.default.join(',') : /** @type {string | number | boolean | null} */ (o.default) ?? '');

/** `--zstd` and any encoding not written by default: a shorthand that adds it, not an option of its own. */
const ADD_FLAGS = ENCODINGS.filter((e) => !e.byDefault).map((e) => ({
  flag: e.name, option: 'encodings', type: 'boolean', default: false, adds: e.name,
  describe: `Also write ${e.suffix} (${e.name}) variants: shorthand that adds ${e.name} to --encodings`,
}));

/**
 * The CLI flags of `precompressor <dir>`, from the options table, each mapped to its API option.
 */
export const CLI_FLAGS = Object.freeze(Object.entries(OPTIONS).flatMap(([option, o]) => {
  if (!o.flag) return [];
  const f = { flag: kebab(option), option, type: o.flag.type, default: shownDefault(o), describe: o.describe };
  return option === 'encodings' ? [f, ...ADD_FLAGS] : [f];
}));

/** Output flags of the CLI that are not API options. */
export const CLI_OUTPUT_FLAGS = Object.freeze([
  { flag: 'quiet', type: 'boolean', default: false, describe: 'Print nothing but errors' },
  { flag: 'json', type: 'boolean', default: false, describe: 'Print the machine-readable report on stdout' },
  { flag: 'watch', type: 'boolean', default: false,
    describe: 'After the first pass, keep watching <dir> and recompress what changes' },
]);

/**
 * API options from parsed CLI arguments: only flags given, so that defaults live in one place.
 * @param {Record<string, unknown>} argv
 * @returns {import('../types.js').PrecompressOptions} as typed; normalizeOptions() checks the values
 */
export function apiOptionsFromArgv(argv) {
  /** @type {Record<string, unknown> & { encodings?: string[] }} */
  const out = {};
  for (const f of CLI_FLAGS) {
    const v = argv[f.flag];
    if (v === undefined) continue;
    if ('adds' in f) {
      const before = out.encodings ?? /** @type {readonly string[]} */ (OPTION_DEFAULTS.encodings);
      if (v === true) out.encodings = [...new Set([...before, f.adds])];
    } else if (f.option === 'encodings') out.encodings = commaList(v);
    else if (f.option === 'skipExtensions') out.skipExtensions = commaList(v);
    else if (f.option === 'include' || f.option === 'exclude') out[f.option] = /** @type {unknown[]} */ (v).map(String);
    else out[f.option] = v;
  }
  return /** @type {import('../types.js').PrecompressOptions} */ (out);
}

/**
 * An error message from the library, worded for the command line: `--min-ratio`, not `options.minRatio`.
 * @param {string} message
 * @param {readonly { flag: string, option: string | null }[]} flags
 */
export function withFlagNames(message, flags) {
  return message.replace(/\boptions\.(\w+)/g, (m, name) => {
    const f = flags.find((x) => x.option === name);
    return f ? `--${f.flag}` : m;
  });
}
