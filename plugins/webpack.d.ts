import type { PrecompressOptions } from '../lib/index.js';

export interface PrecompressorWebpackOptions extends PrecompressOptions {
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}

/**
 * `plugins: [new PrecompressorPlugin(options)]` in webpack.config.js or rspack.config.js: after the
 * compiler has written `output.path` (each rebuild in watch mode), compresses it with the CLI's
 * incremental pass and writes the manifest; each emitted name's hash is read from the compilation.
 * A file that fails is a compilation error. Does nothing when the output is not on disk
 * (webpack-dev-server). Throws a PrecompressorError (`ERR_PRECOMPRESSOR_OPTION`) for a bad option.
 */
export default class PrecompressorPlugin {
  constructor(options?: PrecompressorWebpackOptions);
  /** Called by the compiler (webpack 5 or Rspack). */
  apply(compiler: any): void;
}
export { PrecompressorPlugin };

/** Where each emitted file's hash is in its base name, from the compilation's asset info. */
export declare function hashSpansOfAssets(
  assets: Iterable<{ name: string; info: Record<string, any> }>,
): Map<string, [number, number] | null>;
