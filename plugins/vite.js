import path from 'node:path';
import { optionError } from '../lib/errors.js';
import { normalizeOptions, splitOptions } from '../lib/options.js';
import { printable } from '../lib/util/format.js';
import { hashSpanCollector } from './hash-names.js';
import { compressFolder, summaryLines } from './compress-folder.js';
import { frameworkOf, FRAMEWORK_HINTS } from './frameworks.js';

/**
 * Vite plugin: after Vite has written the client build, run the same incremental pass as the CLI
 * on the resolved outDir (so `public/` files and other plugins' assets are included), and serve
 * the variants in `vite preview` through serveStatic. Public Vite hooks only.
 */

/**
 * Plugin-only options with their defaults; every other option is the compressor's.
 * @type {Readonly<{ ssr: boolean, preview: boolean | object, verbose: boolean }>}
 */
export const VITE_DEFAULTS = Object.freeze({
  ssr: false, // also compress SSR / server-environment outputs
  preview: true, // serve the variants in `vite preview`; or an object of serveStatic options
  verbose: false, // log one line per compressed or removed file, not only the summary
});

/**
 * Split and validate the plugin's options. Compressor options go through the same
 * normalizeOptions as the CLI and the API, so a mistake reads the same everywhere.
 * @param {object} [options]
 */
export function splitViteOptions(options = {}) {
  const { api, own } = splitOptions(options, VITE_DEFAULTS);
  for (const k of /** @type {const} */ (['ssr', 'verbose'])) {
    if (typeof own[k] !== 'boolean') throw optionError(`options.${k}`, 'a boolean', own[k]);
  }
  const p = own.preview;
  if (typeof p !== 'boolean' && (p === null || typeof p !== 'object' || Array.isArray(p))) {
    throw optionError('options.preview', 'a boolean or an object of serveStatic options', p);
  }
  normalizeOptions('.', api); // throws now, when the config loads, not halfway through a build
  return { api, own: Object.freeze(own) };
}

/**
 * The build's client-or-server side, output folder and logger, from the hook's environment.
 * @param {any} ctx the hook's `this`
 * @param {any} config Vite's resolved config
 */
function target(ctx, config) {
  const env = ctx.environment;
  const c = env?.config ?? config;
  const server = env ? c.consumer === 'server' : !!config.build.ssr;
  const outDir = path.resolve(c.root, c.build.outDir);
  return { server, write: c.build.write !== false, outDir, logger: env?.logger ?? config.logger };
}

/**
 * The names of Vite's preview guards: the CORS middleware (the `cors` package's) and the host check
 * (DNS-rebinding protection: `viteHostCheckMiddleware` on Vite 5.4.12+ and 6, `hostValidationMiddleware`
 * on 7 and 8, with a `$n` suffix from Vite's bundler on some releases).
 */
const VITE_GUARD = /^(corsMiddleware|viteHostCheckMiddleware|hostValidationMiddleware)(\$\d+)*$/;

/**
 * Move the `handle` entry of a Connect middleware stack to just after the last of Vite's guards
 * when it comes before one of them (Vite 5 and 6), so every request it serves has been through
 * Vite's CORS and host checks, as any plugin middleware is on Vite 7 and 8. Returns false, with
 * the entry removed, when `corsExpected` but no CORS middleware is in the stack: the stack is not
 * what this function knows, and not serving variants is safer than serving them unguarded.
 * @param {{ route: string, handle: Function }[]} stack
 * @param {Function} handle
 * @param {boolean} corsExpected
 */
export function placeAfterViteGuards(stack, handle, corsExpected) {
  const at = stack.findIndex((e) => e.handle === handle);
  if (at === -1) return false;
  const [entry] = stack.splice(at, 1);
  const names = stack.map((e) => e.handle.name);
  if (corsExpected && !names.some((n) => VITE_GUARD.test(n) && n.startsWith('cors'))) return false;
  let last = -1;
  names.forEach((n, i) => {
    if (VITE_GUARD.test(n)) last = i;
  });
  stack.splice(Math.max(at, last + 1), 0, entry);
  return true;
}

/**
 * After Vite has written the client build: compress `outDir` and report through Vite.
 * @param {any} ctx the hook's plugin context (this.error)
 * @param {any} config Vite's resolved config
 * @param {{ api: any, own: any }} options
 * @param {Map<string, [number, number] | null>} spans the hash span of each file the bundler wrote
 */
async function compressBuild(ctx, config, { api, own }, spans) {
  const t = target(ctx, config);
  if (!t.write || (t.server && !own.ssr)) return;
  try {
    const hashSpans = (/** @type {string} */ rel) => spans.get(rel);
    await compressFolder(t.outDir, api, { root: config.root, logger: t.logger, verbose: own.verbose, hashSpans });
  } catch (err) {
    const { message } = /** @type {Error} */ (err);
    return ctx.error(/^precompressor: /.test(message) ? message : `precompressor: ${printable(message)}`);
  }
}

/**
 * serveStatic's setHeaders for preview: Vite's `preview.headers`, then the user's own hook.
 * @param {Record<string, string | string[] | undefined> | undefined} headers
 * @param {{ setHeaders?: import('../lib/serve/index.js').SetHeaders | null }} extra
 * @returns {import('../lib/serve/index.js').SetHeaders | null | undefined}
 */
function previewSetHeaders(headers, extra) {
  if (!headers) return extra.setHeaders;
  return (res, p, stat, enc) => {
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) res.setHeader(k, v);
    extra.setHeaders?.(res, p, stat, enc);
  };
}

/**
 * `vite preview`: serve the variants through serveStatic, behind Vite's own guards.
 * @param {any} server Vite's preview server
 * @param {{ api: any, own: any }} options
 */
async function configurePreview(server, { api, own }) {
  if (own.preview === false) return;
  const c = server.config;
  const outDir = path.resolve(c.root, c.environments?.client?.build.outDir ?? c.build.outDir);
  let serveStatic;
  try {
    ({ serveStatic } = await import('../lib/serve/index.js'));
  } catch (err) {
    const { message } = /** @type {Error} */ (err);
    c.logger.warn(`precompressor: serveStatic is not available (${message}); vite preview serves uncompressed files`);
    return;
  }
  const extra = own.preview === true ? {} : own.preview;
  let mw;
  try {
    const setHeaders = previewSetHeaders(c.preview?.headers, extra);
    mw = serveStatic(outDir, { manifest: api.manifest, ...extra, setHeaders });
  } catch (err) {
    // Typically no manifest yet: the build ran without this plugin, or not at all.
    c.logger.warn(`precompressor: ${/** @type {Error} */ (err).message}; vite preview serves uncompressed files`);
    return;
  }
  const base = typeof c.base === 'string' && c.base.startsWith('/') ? c.base.replace(/\/+$/, '') : '';
  /** @type {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse,
   *   next: (err?: unknown) => void) => void} */
  const precompressorPreview = (req, res, next) => mw(req, res, next);
  if (base) server.middlewares.use(base, precompressorPreview);
  else server.middlewares.use(precompressorPreview);
  // Vite 5 and 6 add their CORS and host check middlewares after this hook, Vite 7 and 8 before
  // it: once Vite's own middlewares are in place, make sure ours comes after those guards.
  return () => {
    if (!placeAfterViteGuards(server.middlewares.stack, precompressorPreview, c.preview?.cors !== false)) {
      c.logger.warn("precompressor: could not find Vite's CORS middleware in the preview server; " +
        'vite preview serves uncompressed files');
    }
  };
}

/**
 * `plugins: [precompressor(options)]` in vite.config.
 * @param {import('../lib/types.js').PrecompressorViteOptions} [options]
 * @returns {import('vite').Plugin}
 */
export default function precompressor(options = {}) {
  const split = splitViteOptions(options);
  /** @type {any} */
  let config;
  const names = hashSpanCollector({ ssr: split.own.ssr });
  /** @type {string | null} */
  let framework = null;
  return /** @type {import('vite').Plugin} */ ({
    name: 'precompressor',
    enforce: 'post',
    apply: (_c, env) => env.command === 'build' || !!env.isPreview,
    configResolved(c) {
      config = c;
      names.hooks.configResolved(c);
      framework = frameworkOf(c.plugins);
      if (framework && c.command === 'build') {
        c.logger.warn(FRAMEWORK_HINTS[/** @type {keyof typeof FRAMEWORK_HINTS} */ (framework)]);
      }
    },
    buildStart() {
      names.hooks.buildStart.call(this);
      // The compressor loads in closeBundle, not here: loaded while Vite bundles on every core, it
      // delayed the bundle by more than it takes once the bundle is written (#31; docs/benchmarks.md).
    },
    writeBundle(output, bundle) {
      names.hooks.writeBundle.call(this, output, bundle);
    },
    closeBundle: {
      order: 'post',
      sequential: true,
      async handler(error) {
        // The framework writes the deployed folder after this hook: its own integration compresses that.
        if (error || framework) return;
        const env = this.environment?.name ?? (config.build.ssr ? 'ssr' : 'client');
        await compressBuild(this, config, split, names.byEnv.get(env) ?? new Map());
      },
    },
    configurePreviewServer: (server) => (framework ? undefined : configurePreview(server, split)),
  });
}

export { precompressor, summaryLines };
