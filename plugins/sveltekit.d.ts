import type { PrecompressOptions } from '../lib/index.js';

export interface PrecompressorSvelteKitOptions extends PrecompressOptions {
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}

/**
 * `sveltekit({ adapter: precompressed(adapter()) })`: every folder the adapter writes with
 * `builder.writeClient()` / `builder.writePrerendered()` (adapter-static's `build/`, adapter-node's
 * `build/client` and `build/prerendered`) is compressed after the adapter is done, manifest there;
 * an adapter's own `precompress` (`builder.compress()`) is done by precompressor instead, so
 * adapter-node's server sends these variants. The server output is never touched.
 * Throws a PrecompressorError (`ERR_PRECOMPRESSOR_OPTION`) for a bad option, a TypeError for a non-adapter.
 */
export function precompressed<A extends { name: string; adapt: (builder: any) => unknown }>(adapter: A, options?: PrecompressorSvelteKitOptions): A;
export default precompressed;
