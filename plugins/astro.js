import { fileURLToPath } from 'node:url';
import { hashSpanCollector } from './hash-names.js';
import { compressFolder, splitIntegrationOptions } from './compress-folder.js';

/**
 * Astro: the pages are written after Vite's client build, so the plain Vite plugin sees only the
 * bundles. This integration compresses the deployed folder at `astro:build:done` (`dist/` for
 * static output, `dist/client/` for server output: the folder Astro hands the hook), with the
 * hash of every bundled name read from the client build; the server build is left alone.
 */

/**
 * `integrations: [precompressor(options)]` in astro.config.
 * @param {object} [options] compressor options plus `verbose`
 */
export default function precompressor(options = {}) {
  const { api, verbose } = splitIntegrationOptions(options);
  const names = hashSpanCollector();
  let root = process.cwd();
  return {
    name: 'precompressor',
    hooks: {
      'astro:config:setup': (/** @type {any} */ { config, updateConfig }) => {
        root = fileURLToPath(config.root);
        updateConfig({ vite: { plugins: [names.plugin] } });
      },
      'astro:build:done': async (/** @type {any} */ { dir, logger }) => {
        await compressFolder(fileURLToPath(dir), api, { root, logger, verbose, hashSpans: names.lookup });
      },
    },
  };
}

export { precompressor };
