import type { Plugin } from 'vite';
import type { PrecompressOptions, ServeOptions } from '../lib/index.js';

/**
 * Compressor options: the same as `precompress(dir, options)` and the CLI flags (`manifest` resolves against outDir;
 * `cacheDir`, the variant cache that keeps variants across builds although Vite empties outDir, defaults to
 * `<Vite root>/node_modules/.cache/precompressor/variants` and `dictionaryStore`, the deploy-delta store, to
 * `<Vite root>/node_modules/.cache/precompressor/dictionaries`, both found from the Vite root like find-cache-dir).
 */
export type PrecompressorCompressOptions = PrecompressOptions;

/** serveStatic options accepted by `preview` (see the serveStatic section of the README). */
export type PrecompressorPreviewServeOptions = ServeOptions;

export interface PrecompressorViteOptions extends PrecompressorCompressOptions {
  /** Also compress the output of SSR builds / server environments. Default `false`. */
  ssr?: boolean;
  /** Serve the variants in `vite preview` through serveStatic; `false` to leave preview alone. Default `true`. */
  preview?: boolean | PrecompressorPreviewServeOptions;
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}

/** Plugin-only options and their defaults. */
export declare const VITE_DEFAULTS: Readonly<{ ssr: false; preview: true; verbose: false }>;

/**
 * `plugins: [precompressor(options)]`: compresses the client build output after Vite wrote it
 * (public/ files included) and serves the variants in `vite preview`.
 * Throws a PrecompressorError (`ERR_PRECOMPRESSOR_OPTION`) for a bad option.
 */
export default function precompressor(options?: PrecompressorViteOptions): Plugin;
export { precompressor };
