import { normalizeOptions } from '../options.js';
import { formatBinaryBytes, formatDuration, printable } from '../util/format.js';
import { clear, info, prune } from '../compress/index.js';
import { withFlagNames } from './options.js';

/**
 * `precompressor cache info|prune|clear`: look at and trim the variant cache. Exit codes: 0 done,
 * 1 the cache folder could not be read or changed, 2 bad usage.
 */

const CACHE_ACTIONS = Object.freeze(['info', 'prune', 'clear']);

/** The flags of `precompressor cache`: the compressor's flags of the same name, same meaning. */
const CACHE_FLAGS = Object.freeze([
  { flag: 'cache-dir', option: 'cacheDir', type: 'string',
    describe: 'The variant cache folder [default: node_modules/.cache/precompressor/variants]' },
  { flag: 'cache-max-size', option: 'cacheMaxSize', type: 'string',
    describe: 'prune: remove the least recently used entries above this size (bytes, or 500MB, 1GiB...) ' +
      '[default: 512MiB]' },
  { flag: 'json', option: null, type: 'boolean', describe: 'Print the result as JSON on stdout' },
]);

/** @param {import('yargs').Argv} y */
export function cacheBuilder(y) {
  y.positional('action', {
    type: 'string', choices: CACHE_ACTIONS,
    describe: 'info: entries, bytes, hit rate of the last run; prune: evict down to --cache-max-size; ' +
      'clear: remove every entry',
  });
  for (const f of CACHE_FLAGS) y.option(f.flag, { type: /** @type {any} */ (f.type), describe: f.describe });
  return y;
}

/**
 * The text of `cache info` (pure).
 * @param {Awaited<ReturnType<typeof info>>} r
 * @param {number} maxSize
 */
function infoLines(r, maxSize) {
  const lines = [
    `precompressor cache: ${printable(r.dir)}`,
    `  ${r.entries} entries, ${formatBinaryBytes(r.bytes)} (cap ${formatBinaryBytes(maxSize)})`,
  ];
  const last = r.lastRun;
  if (last) {
    const total = last.hits + last.misses;
    const rate = total === 0 ? 0 : (last.hits / total) * 100;
    lines.push(`  last run (${last.at}): ${last.hits} of ${total} outputs from the cache ` +
      `(${rate.toFixed(1)} % hit rate), ${formatDuration(last.cpuSavedMs)} of CPU saved`);
  } else lines.push('  no run recorded yet');
  return lines;
}

/**
 * @param {Record<string, any>} argv
 * @param {NodeJS.WritableStream} stdout
 * @param {NodeJS.WritableStream} stderr
 * @returns {Promise<number>} exit code
 */
export async function cacheCommand(argv, stdout, stderr) {
  let opts;
  try {
    opts = normalizeOptions('.', { cacheDir: argv['cache-dir'], cacheMaxSize: argv['cache-max-size'] });
  } catch (err) {
    stderr.write(`precompressor: ${printable(withFlagNames(/** @type {Error} */ (err).message, CACHE_FLAGS))}\n`);
    return 2;
  }
  const dir = opts.cacheDir;
  let result;
  try {
    if (argv.action === 'info') result = await info(dir);
    else if (argv.action === 'prune') result = { dir, ...(await prune(dir, opts.cacheMaxSize)) };
    else result = { dir, ...(await clear(dir)) };
  } catch (err) {
    stderr.write(`precompressor: cache ${argv.action}: ${printable(/** @type {Error} */ (err).message)}\n`);
    return 1;
  }
  if (argv.json) stdout.write(JSON.stringify(result, null, 2) + '\n');
  else if (!('removed' in result)) stdout.write(infoLines(result, opts.cacheMaxSize).join('\n') + '\n');
  else {
    const freed = formatBinaryBytes(result.freed);
    stdout.write(`precompressor cache: ${result.removed} entries removed (${freed}) from ${printable(dir)}\n`);
  }
  return 0;
}
