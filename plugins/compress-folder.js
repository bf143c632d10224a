import {
  formatBytes, formatDuration, deltaLine, cacheLine, siteDictionaryLine, printable,
} from '../lib/util/format.js';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_NAME, defaultCacheDir, defaultDictionaryStore, normalizeOptions, splitOptions }
  from '../lib/options.js';
import { isInside } from '../lib/paths.js';
import { PrecompressorError, optionError } from '../lib/errors.js';

/**
 * One pass over a folder that a bundler or a framework has just written, for the integrations
 * (Vite, SvelteKit, Astro, Nuxt): the caches found from the project's root (the output folder is
 * emptied on every build), the bundler's hash spans, warnings and the summary through the host's logger.
 */

/**
 * The summary line(s) for a host's logger (pure).
 * @param {import('../lib/util/format.js').SummaryReport} report
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
 *   hashSpans?: (rel: string) => [number, number] | null | undefined, parkedManifest?: string }} FolderContext
 *   root: the project (the caches go to its node_modules/.cache/precompressor);
 *   hashSpans: where the bundler put each hash (a `hashPattern` of the user's wins);
 *   parkedManifest: where the pass writes the manifest, for the host to move it to its final path
 *   later with placeManifest() (Nuxt)
 */

/** The real path of `p`, or of its nearest existing folder with the rest joined on. @param {string} p */
function realOrParent(p) {
  const rest = [];
  for (let at = p; ; at = path.dirname(at)) {
    try {
      return path.join(fs.realpathSync.native(at), ...rest.reverse());
    } catch {
      if (path.dirname(at) === at) return p;
      rest.push(path.basename(at));
    }
  }
}

/**
 * The manifest's final path in the output folder `dir`, checked with the CLI's rule
 * (assertManifestTarget(): only a missing file or a manifest of ours, never a symlink or another
 * kind of file) and inside `dir`, its folders' symlinks resolved: a framework's output folder is
 * all that an integration may write to. Throws ERR_PRECOMPRESSOR_MANIFEST.
 * @param {string} dir
 * @param {unknown} manifest the user's option (relative to `dir`), or undefined
 * @param {(file: string) => void} assertManifestTarget the compressor's (loadCompressor())
 */
export function manifestTarget(dir, manifest, assertManifestTarget) {
  const final = path.resolve(dir, typeof manifest === 'string' ? manifest : MANIFEST_NAME);
  const realDir = realOrParent(path.resolve(dir));
  const realFolder = realOrParent(path.dirname(final));
  if (final === path.resolve(dir) || !isInside(realDir, realFolder)) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `Refusing to write the manifest to ${final}: ` +
      `it is outside the output folder ${dir}. Choose an options.manifest inside it`, { path: final });
  }
  assertManifestTarget(final);
  return final;
}

/**
 * Move a manifest written at a parked path to its final one (Nuxt, once Nitro has listed the
 * folder), the final path checked again by manifestTarget() just before.
 * @param {string} parked
 * @param {string} dir the output folder
 * @param {unknown} manifest the user's option
 */
export async function placeManifest(parked, dir, manifest) {
  const final = manifestTarget(dir, manifest, (await loadCompressor()).assertManifestTarget);
  await fsp.mkdir(path.dirname(final), { recursive: true });
  await fsp.rename(parked, final);
}

/** @type {Promise<typeof import('../lib/compress/index.js')> | undefined} */
let compressor;

/**
 * The compressor's modules, loaded once, by the first pass (compressFolder()). Not earlier: loaded
 * while Vite bundles (at buildStart), they stretched the bundling by more (#31).
 */
export function loadCompressor() {
  return (compressor ??= import('../lib/compress/index.js'));
}

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
  const { precompress, assertManifestTarget } = await loadCompressor();
  const manifest = ctx.parkedManifest ?? manifestTarget(dir, api.manifest, assertManifestTarget);
  // checked now too: fail before the pass, not after
  if (ctx.parkedManifest) manifestTarget(dir, api.manifest, assertManifestTarget);
  const report = await precompress(dir, { ...api, ...keep, hashPattern, manifest });
  for (const w of report.warnings) ctx.logger.warn(`precompressor: ${printable(w.path)}: ${printable(w.message)}`);
  if (!report.ok) {
    const lines = ['precompressor: some files could not be compressed:',
      ...report.failures.map((x) => `  ${printable(x.path)}: ${printable(x.message)}`)];
    throw new PrecompressorError('ERR_PRECOMPRESSOR_FILES', lines.join('\n'));
  }
  for (const line of summaryLines(report, ctx.verbose ?? false)) ctx.logger.info(line);
  if (api.serverConfig && !api.dryRun) {
    const { writeServerConfigs } = await import('../lib/servers/write.js'); // loaded only by the builds that ask
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
