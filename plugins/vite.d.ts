import type { Plugin } from 'vite';
import type { PrecompressorViteOptions } from '../lib/types.js';

// The plugin's option types are in lib/types.d.ts, where its JSDoc (plugins/vite.js) reads them too.
export type { PrecompressorCompressOptions, PrecompressorPreviewServeOptions, PrecompressorViteOptions } from '../lib/types.js';

/** Plugin-only options and their defaults. */
export declare const VITE_DEFAULTS: Readonly<{ ssr: false; preview: true; verbose: false }>;

/**
 * `plugins: [precompressor(options)]`: compresses the client build output after Vite wrote it
 * (public/ files included) and serves the variants in `vite preview`.
 * Throws a PrecompressorError (`ERR_PRECOMPRESSOR_OPTION`) for a bad option.
 */
export default function precompressor(options?: PrecompressorViteOptions): Plugin;
export { precompressor };
