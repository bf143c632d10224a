import fs from 'node:fs';
import path from 'node:path';
import { readManifest } from '../lib/manifest/manifest.js';
import { MANIFEST_NAME } from '../lib/options.js';
import { hashSpanCollector } from './hash-names.js';
import { compressFolder, splitIntegrationOptions } from './compress-folder.js';

/**
 * SvelteKit: the adapter writes the deployed folders (adapter-static's `build/` with the
 * prerendered pages, adapter-node's `build/client` and `build/prerendered`) after Vite's build,
 * so the plain Vite plugin cannot see them. `precompressed(adapter())` wraps the adapter: every
 * folder it writes with `builder.writeClient()` / `writePrerendered()` is compressed once the
 * adapter is done, and an adapter's own `precompress` (`builder.compress()`) is done by
 * precompressor instead, so the adapter's server serves our variants and nothing is compressed twice.
 */

/**
 * The files of `dir` that have both a `.br` and a `.gz` variant, as `builder.compress()` returns
 * them (adapter-node measures both for every file it is given).
 * @param {string} dir
 * @param {string | undefined} manifestOption the user's `manifest` option, relative to the folder
 */
async function bothVariants(dir, manifestOption) {
  const m = await readManifest(manifestOption ? path.resolve(dir, manifestOption) : path.join(dir, MANIFEST_NAME));
  return Object.entries(m?.files ?? {}).filter(([, e]) => e.variants?.br && e.variants?.gzip).map(([rel]) => rel);
}

/**
 * The adapter's Vite config with the collector of hash spans added to its `post` plugins.
 * @param {any} vite the adapter's `vite` (an object or a function of SvelteKit's context)
 * @param {import('vite').Plugin} plugin
 */
function withCollector(vite, plugin) {
  const add = (/** @type {any} */ v = {}) => {
    const list = v.plugins;
    const plugins = Array.isArray(list)
      ? { post: [...list, plugin] }
      : { ...list, post: [...(list?.post ?? []), plugin] };
    return { ...v, plugins };
  };
  return typeof vite === 'function' ? (/** @type {any} */ ctx) => add(vite(ctx)) : add(vite);
}

/**
 * `sveltekit({ adapter: precompressed(adapter()) })`.
 * @template {{ name: string, adapt: (builder: any) => any, vite?: any }} A
 * @param {A} adapter a SvelteKit adapter
 * @param {object} [options] compressor options plus `verbose`
 * @returns {A}
 */
export function precompressed(adapter, options = {}) {
  if (adapter === null || typeof adapter !== 'object' || typeof adapter.adapt !== 'function') {
    const got = adapter === null ? 'null' : typeof adapter;
    throw new TypeError(`precompressed() expects a SvelteKit adapter (an object with adapt()), got ${got}`);
  }
  const { api, verbose } = splitIntegrationOptions(options);
  const names = hashSpanCollector();
  return {
    ...adapter,
    vite: withCollector(adapter.vite, names.plugin),
    async adapt(builder) {
      const logger = {
        info: (/** @type {string} */ m) => builder.log.info(m),
        warn: (/** @type {string} */ m) => builder.log.warn(m),
      };
      const run = (/** @type {string} */ dir) =>
        compressFolder(dir, api, { root: process.cwd(), logger, verbose, hashSpans: names.lookup });
      const written = new Set();
      const done = new Set();
      /** @type {Promise<unknown>} */
      let queue = Promise.resolve();
      let said = false;
      const proxy = Object.create(builder, {
        writeClient: {
          value: (/** @type {string} */ dest) => (written.add(path.resolve(dest)), builder.writeClient(dest)),
        },
        writePrerendered: {
          value: (/** @type {string} */ dest) => (written.add(path.resolve(dest)), builder.writePrerendered(dest)),
        },
        compress: {
          value: async (/** @type {string} */ dir) => {
            const abs = path.resolve(dir);
            if (!said) {
              builder.log.info(`precompressor: ${adapter.name}'s precompress is done by precompressor ` +
                '(Brotli 11, gzip 9, a manifest): its server serves these variants');
            }
            said = true;
            if (!fs.existsSync(abs)) return [];
            done.add(abs);
            // One pass at a time: each pass already uses every core.
            await (queue = queue.then(() => run(abs)));
            return bothVariants(abs, /** @type {string | undefined} */ (api.manifest));
          },
        },
      });
      await adapter.adapt(proxy);
      for (const dir of written) if (!done.has(dir) && fs.existsSync(dir)) await run(dir);
    },
  };
}

export default precompressed;
