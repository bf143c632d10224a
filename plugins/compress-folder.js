import { formatBytes, formatDuration, deltaLine, cacheLine, siteDictionaryLine, printable } from '../lib/format.js';
import { defaultCacheDir, defaultDictionaryStore, normalizeOptions, splitOptions } from '../lib/options.js';
import { precompress } from '../lib/compress/precompress.js';
import { PrecompressorError, optionError } from '../lib/errors.js';
import { writeServerConfigs } from '../lib/servers/write.js';

/**
 * One pass over a folder that a bundler or a framework has just written, for the integrations
 * (Vite, SvelteKit, Astro, Nuxt): the caches found from the project's root (the output folder is
 * emptied on every build), the bundler's hash spans, warnings and the summary through the host's logger.
 */

/**
 * The summary line(s) for a host's logger (pure).
 * @param {import('../lib/format.js').SummaryReport} report
 * @param {boolean} verbose
 */
export function summaryLines(report, verbose) {
  const f = report.files;
  const sizes = report.encodings.map((/** @type {string} */ e) => `${e} ${formatBytes(report.bytes[e] ?? 0)}`)
    .join(', ');
  const cached = f.fromCache ? `${f.fromCache} from cache, ` : '';
  const lines = [
    `precompressor: ${f.compressed} compressed, ${cached}${f.unchanged} unchanged, ` +
      `${f.scanned} files in ${formatDuration(report.durationMs)}; ` +
      `${formatBytes(report.bytes.compressible)} compressible → ${sizes}`,
  ];
  const deltas = deltaLine(report.deltas);
  if (deltas) lines.push(`precompressor: ${deltas}`);
  const site = siteDictionaryLine(report.siteDictionary);
  if (site) lines.push(`precompressor: ${site}`);
  const cache = cacheLine(report.cache);
  if (cache) lines.push(`precompressor: ${cache}`);
  if (verbose) for (const c of report.changes) lines.push(`  ${c.action} ${printable(c.path)}`);
  return lines;
}

/**
 * @typedef {{ info(msg: string): void, warn(msg: string): void }} HostLogger
 * @typedef {{ root: string, logger: HostLogger, verbose?: boolean,
 *   hashSpans?: (rel: string) => [number, number] | null | undefined }} FolderContext
 *   root: the project (the caches go to its node_modules/.cache/precompressor);
 *   hashSpans: where the bundler put each hash (a `hashPattern` of the user's wins)
 */

/**
 * Compress `dir` and log through the host. Throws a PrecompressorError (`ERR_PRECOMPRESSOR_FILES`)
 * naming every file that failed, for the host to fail its build with.
 * @param {string} dir
 * @param {Record<string, any>} api the compressor options as the user gave them
 * @param {FolderContext} ctx
 */
export async function compressFolder(dir, api, ctx) {
  const keep = {
    cacheDir: api.cacheDir ?? defaultCacheDir(ctx.root),
    dictionaryStore: api.dictionaryStore ?? defaultDictionaryStore(ctx.root),
  };
  const hashPattern = api.hashPattern ?? ctx.hashSpans ?? null;
  const report = await precompress(dir, { ...api, ...keep, hashPattern });
  for (const w of report.warnings) ctx.logger.warn(`precompressor: ${printable(w.path)}: ${printable(w.message)}`);
  if (!report.ok) {
    const lines = ['precompressor: some files could not be compressed:',
      ...report.failures.map((x) => `  ${printable(x.path)}: ${printable(x.message)}`)];
    throw new PrecompressorError('ERR_PRECOMPRESSOR_FILES', lines.join('\n'));
  }
  for (const line of summaryLines(report, ctx.verbose ?? false)) ctx.logger.info(line);
  if (api.serverConfig && !api.dryRun) {
    await writeServerConfigs(dir, { out: api.serverConfig, manifest: api.manifest ?? undefined });
    ctx.logger.info(`precompressor: nginx and Caddy configurations written to ${printable(api.serverConfig)}`);
  }
  return report;
}

/**
 * Split and check a framework integration's options: the compressor's (checked now by the same
 * normalizeOptions as everywhere, so a mistake fails when the config loads) and `verbose`.
 * @param {object} [options]
 */
export function splitIntegrationOptions(options = {}) {
  const { api, own } = splitOptions(options, { verbose: false });
  if (typeof own.verbose !== 'boolean') throw optionError('options.verbose', 'a boolean', own.verbose);
  normalizeOptions('.', api);
  return { api, verbose: /** @type {boolean} */ (own.verbose) };
}
