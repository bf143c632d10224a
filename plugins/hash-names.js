import { otherCompressors, otherCompressorsHint } from './frameworks.js';

/**
 * Where the content hash is in each name a bundle emitted, read from Rollup/Rolldown's own output
 * options (`[hash]` in `entryFileNames`, `chunkFileNames`, `assetFileNames`, strings or functions)
 * rather than guessed from the name: deploy-delta families then hold across builds whatever the
 * hash looks like. Pure: no disk.
 */

/** Rollup's `[hash]` length when the template gives none (`[hash:10]` gives one). */
const DEFAULT_HASH_LENGTH = 8;

/**
 * RegExp source for literal text.
 * @param {string} text
 */
function literal(text) {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * The `[start, end)` of the hash in the base name of `fileName`, when `fileName` was made from
 * `template`; null when the template has no `[hash]`; undefined when the name does not fit the
 * template (or its hash is in a folder name): the caller then falls back to its default rule.
 * @param {string} template e.g. `assets/[name]-[hash].js`, `_app/immutable/chunks/[hash].js`
 * @param {string} fileName e.g. `assets/index-Cf-WVkYG.js`
 * @returns {[number, number] | null | undefined}
 */
export function hashSpanOf(template, fileName) {
  if (!/\[hash(?::\d+)?\]/.test(template)) return null;
  let named = false;
  const source = template.split(/(\[[a-zA-Z]+(?::\d+)?\])/).map((part, i) => {
    if (i % 2 === 0) return literal(part);
    const hash = /^\[hash(?::(\d+))?\]$/.exec(part);
    if (!hash) return '(.*?)';
    const chars = `[A-Za-z0-9_-]{${hash[1] ?? DEFAULT_HASH_LENGTH}}`;
    if (named) return chars;
    named = true;
    return `(?<hash>${chars})`;
  }).join('');
  const m = new RegExp(`^${source}$`, 'd').exec(fileName);
  const span = m?.indices?.groups?.hash;
  const base = fileName.lastIndexOf('/') + 1;
  if (!span || span[0] < base) return undefined;
  return [span[0] - base, span[1] - base];
}

/**
 * The template Rollup used for one output file: the entry, chunk or asset file names option, a
 * function called with the output item as its pre-rendered info (as the bundler did).
 * @param {any} output Rollup/Rolldown output options
 * @param {any} item an OutputChunk or OutputAsset
 * @returns {string | null}
 */
function templateOf(output, item) {
  const option = item.type === 'asset'
    ? output.assetFileNames
    : item.isEntry ? output.entryFileNames : output.chunkFileNames;
  try {
    const t = typeof option === 'function' ? option(item) : option;
    return typeof t === 'string' ? t : null;
  } catch {
    return null; // a template function that needs more than the output item gives: the default rule
  }
}

/**
 * The hash span of every file of a written bundle, by its path relative to the output folder.
 * @param {any} output Rollup/Rolldown output options (writeBundle's first argument)
 * @param {Record<string, any>} bundle
 * @returns {Map<string, [number, number] | null>}
 */
export function hashSpansOfBundle(output, bundle) {
  const spans = new Map();
  for (const item of Object.values(bundle)) {
    const template = templateOf(output, item);
    const span = template === null ? undefined : hashSpanOf(template, item.fileName);
    if (span !== undefined) spans.set(item.fileName, span);
  }
  return spans;
}

/**
 * A Vite plugin that records the hash span of every file the client build wrote (per
 * environment; `ssr`/`client` before Vite 6), for the frameworks' integrations, which compress
 * the deployed folder later: `lookup(rel)` for a path relative to the client output folder
 * (undefined when the bundle did not write it: the default rule applies).
 * @param {{ ssr?: boolean }} [o] also record server environments
 */
export function hashSpanCollector({ ssr = false } = {}) {
  /** @type {Map<string, Map<string, [number, number] | null>>} */
  const byEnv = new Map();
  let ssrBuild = false;
  const keyOf = (/** @type {any} */ ctx) => ctx.environment?.name ?? (ssrBuild ? 'ssr' : 'client');
  const isServer = (/** @type {any} */ ctx) =>
    (ctx.environment ? ctx.environment.config.consumer === 'server' : ssrBuild);
  const client = () => byEnv.get('client') ?? new Map();
  /** The hooks, called with the plugin context as `this` (also by the Vite plugin's own hooks). */
  const hooks = {
    /** @param {any} c Vite's resolved config */
    configResolved(c) {
      ssrBuild = !!c.build.ssr;
      const others = c.command === 'build' ? otherCompressors(c.plugins) : [];
      if (others.length > 0) c.logger.warn(otherCompressorsHint(others));
    },
    /** @this {any} */
    buildStart() {
      byEnv.set(keyOf(this), new Map());
    },
    /**
     * @this {any}
     * @param {any} output
     * @param {Record<string, any>} bundle
     */
    writeBundle(output, bundle) {
      if (isServer(this) && !ssr) return;
      const own = byEnv.get(keyOf(this)) ?? new Map();
      for (const [rel, span] of hashSpansOfBundle(output, bundle)) own.set(rel, span);
      byEnv.set(keyOf(this), own);
    },
  };
  return {
    byEnv,
    hooks,
    /** @param {string} rel */
    lookup: (rel) => client().get(rel),
    /** @type {import('vite').Plugin} */
    plugin: { name: 'precompressor:hash-names', apply: 'build', ...hooks },
  };
}
