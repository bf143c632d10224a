import { fileURLToPath } from 'node:url';
import { hashSpanCollector } from './hash-names.js';
import { compressFolder, splitIntegrationOptions } from './compress-folder.js';

/**
 * Astro: the pages are written after Vite's client build, so the plain Vite plugin sees only the
 * bundles. This integration compresses the deployed folder at `astro:build:done` (`dist/` for
 * static output, `dist/client/` for server output: the folder Astro hands the hook), with the
 * hash of every bundled name read from the client build; the server build is left alone.
 */

/** Said once per server build: the adapter's own static serving ignores the variants. */
const SERVER_HINT = "precompressor: serve dist/client with serveStatic before Astro's handler " +
  "(@astrojs/node mode: 'middleware'): a standalone server sends its files as they are, the manifest included, " +
  'and none of the variants (docs/frameworks.md)';

/**
 * `integrations: [precompressor(options)]` in astro.config.
 * @param {object} [options] compressor options plus `verbose`
 */
export default function precompressor(options = {}) {
  const { api, verbose } = splitIntegrationOptions(options);
  const names = hashSpanCollector();
  let root = process.cwd();
  let server = false;
  return {
    name: 'precompressor',
    hooks: {
      'astro:config:setup': (/** @type {any} */ { config, updateConfig }) => {
        root = fileURLToPath(config.root);
        updateConfig({ vite: { plugins: [names.plugin] } });
      },
      'astro:config:done': (/** @type {any} */ { config }) => {
        server = config.output === 'server';
      },
      'astro:build:done': async (/** @type {any} */ { dir, logger }) => {
        await compressFolder(fileURLToPath(dir), api, { root, logger, verbose, hashSpans: names.lookup });
        if (server) logger.info(SERVER_HINT);
      },
    },
  };
}

export { precompressor };
