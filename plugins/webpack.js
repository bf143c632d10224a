import fs from 'node:fs/promises';
import path from 'node:path';
import { printable } from '../lib/util/format.js';
import { normalizeOptions } from '../lib/options.js';
import { compressFolder, splitIntegrationOptions } from './compress-folder.js';
import { keepOwnOutputs } from './webpack-clean.js';

/**
 * webpack 5 and Rspack: once the compiler has written its output (`afterEmit`, each rebuild in
 * watch mode), run the CLI's incremental pass over `output.path`, with where each emitted name's
 * hash is read from the asset's own info (`contenthash`, `chunkhash`, `fullhash`), not guessed.
 * A failed file is a compilation error. Nothing is done when the output is not on disk
 * (webpack-dev-server, webpack-dev-middleware: an in-memory output file system).
 */

const NAME = 'PrecompressorPlugin';

/**
 * The hash span of each emitted file (by its path in the output folder) from the assets' info:
 * the last place in the base name where one of its hashes is; null when the asset has no hash
 * (an unhashed name); undefined (left out) when its hash is not in the base name (the default rule).
 * Pure.
 * @param {Iterable<{ name: string, info: Record<string, any> }>} assets
 * @returns {Map<string, [number, number] | null>}
 */
export function hashSpansOfAssets(assets) {
  /** @type {Map<string, [number, number] | null>} */
  const spans = new Map();
  for (const { name, info } of assets) {
    const file = name.replace(/[?#].*$/s, ''); // `[name].js?[contenthash]`: the query is not in the file's name
    const base = file.slice(file.lastIndexOf('/') + 1);
    const hashes = [info.contenthash, info.chunkhash, info.fullhash].flat()
      .filter((h) => typeof h === 'string' && h !== '');
    /** @type {[number, number] | null} */
    let span = null;
    for (const h of hashes) {
      const at = base.lastIndexOf(h);
      if (at !== -1 && (span === null || at > span[0])) span = [at, at + h.length];
    }
    // a hash only in a folder's name: the default rule; only in the query: the name has none
    if (span !== null || !hashes.some((h) => file.includes(h))) spans.set(file, span);
  }
  return spans;
}

/**
 * Did the compiler write to this machine's disk? webpack-dev-server and webpack-dev-middleware
 * swap in an in-memory output file system: the file it reports is then not the one on disk.
 * @param {any} compiler
 * @param {any} compilation
 */
async function writtenToDisk(compiler, compilation) {
  if (process.env.WEBPACK_SERVE) return false; // `webpack serve` (webpack-cli), even with writeToDisk
  const asset = compilation.getAssets()[0];
  if (asset === undefined) return true;
  const file = path.join(compiler.outputPath, asset.name.replace(/[?#].*$/s, ''));
  const ofs = compiler.outputFileSystem;
  const viaCompiler = await new Promise((resolve) => {
    if (typeof ofs?.stat !== 'function') return resolve(null);
    ofs.stat(file, (/** @type {unknown} */ err, /** @type {any} */ st) => resolve(err ? null : st));
  });
  const onDisk = await fs.stat(file).catch(() => null);
  return viaCompiler !== null && onDisk !== null && Number(viaCompiler.ino) === onDisk.ino &&
    Number(viaCompiler.size) === onDisk.size && Number(viaCompiler.mtimeMs) === onDisk.mtimeMs;
}

/**
 * Compress the written output of one compilation; a failure becomes a compilation error.
 * @param {any} compiler
 * @param {any} compilation
 * @param {{ api: Record<string, any>, verbose: boolean }} options
 */
async function compressOutput(compiler, compilation, { api, verbose }) {
  const logger = compiler.getInfrastructureLogger(NAME);
  if (compilation.errors.length > 0) return; // a failed build is not deployed
  if (!(await writtenToDisk(compiler, compilation))) {
    logger.debug?.('the output is not on disk (dev server): nothing compressed');
    return;
  }
  const spans = hashSpansOfAssets(compilation.getAssets());
  try {
    await compressFolder(compiler.outputPath, api, {
      root: compiler.context, logger, verbose, hashSpans: (rel) => spans.get(rel),
    });
  } catch (err) {
    const { message } = /** @type {Error} */ (err);
    const text = /^precompressor: /.test(message) ? message : `precompressor: ${printable(message)}`;
    const WebpackError = compiler.webpack?.WebpackError ?? Error;
    compilation.errors.push(new WebpackError(text));
  }
}

/** `plugins: [new PrecompressorPlugin(options)]` in webpack.config.js or rspack.config.js. */
export default class PrecompressorPlugin {
  /** @param {object} [options] compressor options plus `verbose` */
  constructor(options = {}) {
    this.options = splitIntegrationOptions(options); // a bad option throws when the config loads
  }

  /** @param {any} compiler a webpack or Rspack Compiler */
  apply(compiler) {
    // output.path is filled in after the plugins are applied: the manifest's path is found when needed
    const clean = keepOwnOutputs(compiler, () => normalizeOptions(compiler.outputPath, this.options.api).manifest);
    compiler.hooks.thisCompilation.tap(NAME, () => clean.reset());
    compiler.hooks.afterEmit.tapPromise(NAME, (/** @type {any} */ compilation) =>
      compressOutput(compiler, compilation, this.options));
  }
}

export { PrecompressorPlugin };
