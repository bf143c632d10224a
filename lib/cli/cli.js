import { fastCompressArgv } from './fast-args.js';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS, apiOptionsFromArgv, withFlagNames } from './options.js';
import { formatProgress, formatSummary, printable } from '../util/format.js';
import { precompressForCli } from './compress-thread.js';

const SERVE_ABOUT = 'Preview a compressed folder with serveStatic (its own options: serve --help)';
const CONFIG_ABOUT = 'Write the nginx or Caddy configuration of a built folder ' +
  '(config nginx|caddy <dir> --out <folder>; to compress a folder named config: ./config)';
const CACHE_ABOUT = 'Show (info), trim (prune) or empty (clear) the variant cache (cache --help)';

/**
 * The command line: `precompressor <dir>`, `precompressor serve <dir>` (lib/cli/serve.js), `precompressor cache
 * info|prune|clear` (lib/cli/cache.js). Returns the exit code:
 * 0 success, 1 some files failed, 2 bad usage (option, folder, manifest).
 * @param {string[]} args
 * @param {{ stdout?: NodeJS.WritableStream & { isTTY?: boolean },
 *   stderr?: NodeJS.WritableStream & { isTTY?: boolean } }} [io]
 */
export async function main(args, io = {}) {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const plain = fastCompressArgv(args);
  if (plain) return runCompress(plain, stdout, stderr);
  const [{ default: yargs }, { serveBuilder, serveCommand }, { cacheBuilder, cacheCommand }, config] =
    await Promise.all([import('yargs'), import('./serve.js'), import('./cache.js'), import('./config.js')]);
  const { configBuilder, configCommand } = config;
  let code = 0;
  const y = yargs(args)
    .scriptName('precompressor')
    .usage('$0 <dir> [options]\n\n' +
      'Compress every eligible file under <dir> to .br (Brotli 11) and .gz (gzip 9), once, on all cores,\n' +
      'and write <dir>/precompressor-manifest.json for serveStatic().')
    .command('$0 <dir>', false, compressBuilder, async (argv) => {
      code = await runCompress(argv, stdout, stderr);
    })
    .command('serve <dir>', SERVE_ABOUT, serveBuilder, async (argv) => {
      code = await serveCommand(argv, stdout, stderr);
    })
    .command('cache <action>', CACHE_ABOUT, cacheBuilder, async (argv) => {
      code = await cacheCommand(argv, stdout, stderr);
    })
    .command('config <server> <dir>', CONFIG_ABOUT, configBuilder, async (argv) => {
      code = await configCommand(argv, stdout, stderr);
    })
    .example('$0 dist', 'compress dist/ (e.g. as "postbuild": "precompressor dist")')
    .example('$0 dist --exclude "**/*.map" --json', 'skip source maps, print a JSON report')
    .example('$0 dist --watch', 'compress, then recompress what changes')
    .example('$0 cache info', 'where the variant cache is, its size and the last run\'s hit rate')
    .example('$0 config nginx dist --out /etc/nginx/site', 'write http.conf and server.conf (docs/servers.md)')
    .example('$0 serve dist --spa', 'preview dist/ with the precompressed variants at http://127.0.0.1:8080/')
    .strict()
    .help()
    .version()
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg, err) => {
      throw err ?? new UsageError(unknownFlagsMessage(msg, args) ?? msg);
    });
  try {
    await y.parseAsync();
  } catch (err) {
    stderr.write(`precompressor: ${printable(/** @type {Error} */ (err).message)}\n`);
    return 2;
  }
  return code;
}

class UsageError extends Error {}

/**
 * yargs' "Unknown arguments: watch, brotli-quality, brotliQuality" as "Unknown arguments: --watch,
 * --brotli-quality" (pure; null for another message).
 * @param {string} msg
 * @param {readonly string[]} args the command line
 */
export function unknownFlagsMessage(msg, args) {
  const m = /^Unknown arguments?: (.*)$/s.exec(msg);
  if (!m) return null;
  const names = m[1].split(', ');
  const kebab = (/** @type {string} */ n) => n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const shown = names.filter((n) => kebab(n) === n || !names.includes(kebab(n)))
    .map((n) => (args.includes(n) ? n : n.length === 1 ? `-${n}` : `--${n}`));
  return `Unknown argument${shown.length > 1 ? 's' : ''}: ${shown.join(', ')} (see --help)`;
}

/** The compression flags, on `precompressor <dir>` only. @param {import('yargs').Argv} c */
export function compressBuilder(c) {
  c.positional('dir', { type: 'string', describe: 'Folder to compress (your build output)' });
  for (const f of [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS]) {
    const shown = f.default === '' ? 'none' : f.default;
    c.option(f.flag, { type: /** @type {any} */ (f.type), describe: `${f.describe} [default: ${shown}]` });
  }
  return c.check((argv) => {
    for (const f of CLI_FLAGS) {
      if (f.type === 'number' && argv[f.flag] !== undefined && Number.isNaN(argv[f.flag])) {
        throw new UsageError(`Expected --${f.flag} to be a number`);
      }
    }
    return true;
  });
}

/**
 * @param {Record<string, any>} argv
 * @param {NodeJS.WritableStream & { isTTY?: boolean }} stdout
 * @param {NodeJS.WritableStream & { isTTY?: boolean }} stderr
 */
async function runCompress(argv, stdout, stderr) {
  const quiet = argv.quiet;
  const tty = !!stderr.isTTY && !quiet;
  let lastPlain = 0;
  const onProgress = quiet
    ? undefined
    : (/** @type {import('../util/format.js').Progress} */ p) => {
        if (tty) stderr.write(`\r\x1b[2K${formatProgress(p, 24)}`);
        else if (p.elapsedMs - lastPlain >= 2000 && p.filesDone < p.filesTotal) {
          lastPlain = p.elapsedMs;
          stderr.write(`${formatProgress(p, 0).trim()}\n`);
        }
      };
  let report;
  try {
    // The compressor loads on the pass thread only (`serve` never needs it); the list of changes
    // crosses back only for what prints it: --json and --dry-run's summary.
    const changes = Boolean(argv.json || argv['dry-run']);
    report = await precompressForCli(String(argv.dir), apiOptionsFromArgv(argv), onProgress, { changes });
  } catch (err) {
    stderr.write(`precompressor: ${printable(withFlagNames(/** @type {Error} */ (err).message, CLI_FLAGS))}\n`);
    return 2;
  } finally {
    if (tty) stderr.write('\r\x1b[2K');
  }
  const api = apiOptionsFromArgv(argv);
  try {
    // loaded only when asked for: a plain run's start-up stays as it is (#31)
    const written = api.serverConfig ? await (await import('./config.js')).afterBuild(String(argv.dir), api) : [];
    for (const f of written) if (!quiet && !argv.json) stderr.write(`server configuration: ${printable(f)}\n`);
  } catch (err) {
    stderr.write(`precompressor: ${printable(/** @type {Error} */ (err).message)}\n`);
    return 2;
  }
  for (const w of report.warnings) if (!quiet) stderr.write(`warning: ${printable(w.path)}: ${printable(w.message)}\n`);
  for (const f of report.failures) stderr.write(`error: ${printable(f.path)}: ${printable(f.message)}\n`);
  if (argv.json) stdout.write(JSON.stringify(report, null, 2) + '\n');
  else if (!quiet) stdout.write(formatSummary(report) + '\n');
  if (argv.watch && !argv['dry-run']) return runWatch(argv, stdout, stderr);
  return report.ok ? 0 : 1;
}

/**
 * @param {Record<string, any>} argv
 * @param {NodeJS.WritableStream & { isTTY?: boolean }} stdout
 * @param {NodeJS.WritableStream & { isTTY?: boolean }} stderr
 */
async function runWatch(argv, stdout, stderr) {
  const { watchCommand } = await import('./watch.js');
  return watchCommand(String(argv.dir), apiOptionsFromArgv(argv), { quiet: !!argv.quiet, stdout, stderr });
}
