import type { PrecompressOptions } from '../lib/index.js';

export interface PrecompressorNuxtOptions extends PrecompressOptions {
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}

/**
 * The Nuxt module: `modules: ['precompressor/nuxt']` (options: `[['precompressor/nuxt', { … }]]` or the
 * `precompressor` key of nuxt.config). In production builds, compresses `.output/public` after Nitro
 * copied the public assets and prerendered pages into it and before Nitro bundles its server, so
 * Nitro's server sends these variants; the manifest is moved into the folder after the server is
 * built, so Nitro never serves it. Warns when Nitro's `compressPublicAssets` is on too.
 */
declare function precompressorModule(inline: PrecompressorNuxtOptions, nuxt: any): void;
declare namespace precompressorModule {
  function getMeta(): Promise<{ name: string; configKey: string }>;
}
export default precompressorModule;
export { precompressorModule };
