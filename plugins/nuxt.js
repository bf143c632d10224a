import path from 'node:path';
import { hashSpanCollector } from './hash-names.js';
import { compressFolder, placeManifest, splitIntegrationOptions } from './compress-folder.js';

/**
 * Nuxt: Nitro copies the client build into `.output/public` (with the prerendered pages) after
 * Vite's build, so the plain Vite plugin cannot see it. This module compresses `.output/public` at
 * Nuxt's `nitro:build:public-assets` hook: after the public assets and prerendered pages are
 * there, before Nitro bundles its server, so Nitro's own server lists our `.br`/`.gz` files and
 * sends them. The manifest is written beside the folder and moved into it once the server is
 * built (`compiled`), so Nitro's server never lists it. Production builds only; the server build
 * is left alone.
 */

/** The name of the manifest while Nitro builds its table of public assets. */
const PARKED = '.precompressor-manifest.json';

/**
 * The module: `modules: ['precompressor/nuxt']`, or `[['precompressor/nuxt', options]]`.
 * @param {object} inline compressor options plus `verbose`
 * @param {any} nuxt
 */
export default function precompressorModule(inline, nuxt) {
  const { api, verbose } = splitIntegrationOptions({ ...nuxt.options.precompressor, ...inline });
  if (nuxt.options.dev) return;
  const names = hashSpanCollector();
  nuxt.hook('vite:extendConfig', (/** @type {any} */ config, /** @type {any} */ env) => {
    if (env?.isClient !== false) (config.plugins ??= []).push(names.plugin);
  });
  nuxt.hook('nitro:build:public-assets', async (/** @type {any} */ nitro) => {
    const publicDir = nitro.options.output.publicDir;
    const logger = {
      info: (/** @type {string} */ m) => nitro.logger.info(m),
      warn: (/** @type {string} */ m) => nitro.logger.warn(m),
    };
    if (nitro.options.compressPublicAssets) {
      logger.warn("precompressor: Nitro's compressPublicAssets compresses .output/public too " +
        '(gzip and Brotli at its own levels); precompressor recompresses and lists those variants: ' +
        'set nitro: { compressPublicAssets: false } in nuxt.config to compress once');
    }
    const parked = path.join(path.dirname(publicDir), PARKED);
    const ctx = { root: nuxt.options.rootDir, logger, verbose, hashSpans: names.lookup, parkedManifest: parked };
    await compressFolder(publicDir, api, ctx);
    nitro.hooks.hook('compiled', () => placeManifest(parked, publicDir, api.manifest));
  });
}

/** Nuxt reads a module's name and config key from here (what defineNuxtModule would give). */
precompressorModule.getMeta = () => Promise.resolve({ name: 'precompressor', configKey: 'precompressor' });

export { precompressorModule };
