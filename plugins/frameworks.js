/**
 * Frameworks whose deployed folder is written after Vite's client build (so after the plain
 * plugin's pass): recognised by their Vite plugins' names, each with the integration to use.
 */

/** @type {Record<string, RegExp>} */
const SIGNATURES = {
  sveltekit: /^vite-plugin-sveltekit/,
  astro: /^astro:/,
  nuxt: /^nuxt:/,
};

/**
 * The framework whose Vite plugins are in `plugins`, or null (plain Vite, React Router: the
 * client outDir is what is deployed).
 * @param {readonly { name?: string }[]} plugins
 * @returns {'sveltekit' | 'astro' | 'nuxt' | null}
 */
export function frameworkOf(plugins) {
  for (const [name, re] of Object.entries(SIGNATURES)) {
    if (plugins.some((p) => typeof p?.name === 'string' && re.test(p.name))) return /** @type {any} */ (name);
  }
  return null;
}

/** What to use instead of the plain Vite plugin, said once per build. */
export const FRAMEWORK_HINTS = Object.freeze({
  sveltekit: "precompressor: SvelteKit's adapter writes the deployed folder after Vite's build, " +
    'so this plugin compresses nothing here; wrap the adapter instead: ' +
    "sveltekit({ adapter: precompressed(adapter()) }) with precompressed from 'precompressor/sveltekit' " +
    '(docs/frameworks.md)',
  astro: "precompressor: Astro writes the deployed folder after Vite's build, " +
    'so this plugin compresses nothing here; ' +
    "add the integration instead: integrations: [precompressor()] from 'precompressor/astro' (docs/frameworks.md)",
  nuxt: "precompressor: Nitro writes .output/public after Vite's build, so this plugin compresses nothing here; " +
    "add the module instead: modules: ['precompressor/nuxt'] (docs/frameworks.md)",
});

/** Names of other compression plugins (vite-plugin-compression, rollup-plugin-gzip, …); ours excluded. */
const COMPRESSOR_NAME = /compress|gzip|brotli|zstd/i;

/**
 * The other plugins of a build that compress its output too (pure): two tools writing `.br`/`.gz`
 * beside the same files, the last one decides what is served.
 * @param {readonly { name?: string }[]} plugins
 * @returns {string[]}
 */
export function otherCompressors(plugins) {
  return plugins.map((p) => p?.name).filter(/** @returns {n is string} */ (n) =>
    typeof n === 'string' && COMPRESSOR_NAME.test(n) && !n.startsWith('precompressor'));
}

/** The warning for otherCompressors(), once per build. @param {string[]} names */
export const otherCompressorsHint = (names) =>
  `precompressor: ${names.join(', ')} also compress${names.length === 1 ? 'es' : ''} the build output: ` +
  'two tools then write .br/.gz beside the same files, and whichever runs last decides what is sent ' +
  '(serveStatic says so at start-up when they differ from its manifest); ' +
  'remove it: precompressor makes Brotli 11 and gzip 9 with a manifest';
