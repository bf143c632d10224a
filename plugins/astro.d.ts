import type { PrecompressOptions } from '../lib/index.js';

export interface PrecompressorAstroOptions extends PrecompressOptions {
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}

/** The Astro integration object (structurally an `AstroIntegration`). */
export interface PrecompressorAstroIntegration {
  name: 'precompressor';
  hooks: Record<string, (...args: any[]) => unknown>;
}

/**
 * `integrations: [precompressor()]`: at `astro:build:done`, compresses the folder Astro deploys
 * (`dist/` for static output, `dist/client/` for server output) with its manifest, the bundled
 * names' hashes read from the client build. The server build is never touched.
 * Throws a PrecompressorError (`ERR_PRECOMPRESSOR_OPTION`) for a bad option.
 */
export default function precompressor(options?: PrecompressorAstroOptions): PrecompressorAstroIntegration;
export { precompressor };
