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
  sveltekit: "precompressor: SvelteKit's adapter writes the deployed folder after Vite's build, so this plugin compresses nothing here; " +
    "wrap the adapter instead: sveltekit({ adapter: precompressed(adapter()) }) with precompressed from 'precompressor/sveltekit' (docs/frameworks.md)",
  astro: "precompressor: Astro writes the deployed folder after Vite's build, so this plugin compresses nothing here; " +
    "add the integration instead: integrations: [precompressor()] from 'precompressor/astro' (docs/frameworks.md)",
  nuxt: "precompressor: Nitro writes .output/public after Vite's build, so this plugin compresses nothing here; " +
    "add the module instead: modules: ['precompressor/nuxt'] (docs/frameworks.md)",
});
