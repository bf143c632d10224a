import path from 'node:path';
import { deltasOf, readManifestSync } from '../lib/manifest/manifest.js';
import { variantPath } from '../lib/encodings.js';

/**
 * `output.clean` removes every file the compilation did not emit, our variants and manifest too:
 * the next pass would then take them all from the cache again (and in Rspack's watch mode, on
 * each rebuild). The clean step is given a `keep` that also keeps what the manifest lists as ours;
 * the pass then removes those whose source is gone.
 */

/**
 * Paths (POSIX, relative to the folder) of the files the manifest records as ours. Pure.
 * @param {import('../lib/manifest/manifest.js').Manifest} manifest
 * @param {string} manifestRel the manifest's own path in the folder ('' when outside it)
 */
export function ownOutputs(manifest, manifestRel) {
  const ours = new Set(manifestRel ? [manifestRel] : []);
  for (const [rel, e] of Object.entries(manifest.files)) {
    for (const enc of Object.keys(e.variants)) ours.add(variantPath(rel, /** @type {any} */ (enc)));
    for (const [, , p] of deltasOf(rel, e)) ours.add(p);
  }
  if (manifest.siteDictionary) ours.add(manifest.siteDictionary.path);
  return ours;
}

/**
 * The user's `keep` (function, RegExp or path prefix, as webpack reads it) or nothing.
 * @param {unknown} keep
 * @returns {(p: string) => boolean}
 */
function userKeep(keep) {
  if (typeof keep === 'function') return (p) => !!keep(p);
  if (keep instanceof RegExp) return (p) => keep.test(p);
  if (typeof keep === 'string') return (p) => p.startsWith(keep);
  return () => false;
}

/**
 * Give the compiler's `output.clean` (when on) a `keep` that spares our outputs, read from the
 * manifest once per compilation (`reset()` at each one).
 * @param {any} compiler
 * @param {() => string} manifestOf the manifest's absolute path
 */
export function keepOwnOutputs(compiler, manifestOf) {
  const clean = compiler.options.output?.clean;
  if (!clean) return { reset() {} };
  const theirs = userKeep(typeof clean === 'object' ? clean.keep : undefined);
  /** @type {Set<string> | null} */
  let ours = null;
  const rel = (/** @type {string} */ p) => {
    const r = path.isAbsolute(p) ? path.relative(compiler.outputPath, p) : p; // Rspack gives absolute paths
    return r.split(path.sep).join('/');
  };
  const keep = (/** @type {string} */ p) => {
    if (theirs(p)) return true;
    if (ours === null) {
      const manifestFile = manifestOf();
      const manifestRel = rel(manifestFile);
      let manifest = null;
      try {
        manifest = readManifestSync(manifestFile);
      } catch {
        // an invalid manifest: clean as asked, the pass starts afresh
      }
      ours = manifest ? ownOutputs(manifest, manifestRel.startsWith('..') ? '' : manifestRel) : new Set();
    }
    return ours.has(rel(p));
  };
  compiler.options.output.clean = { ...(typeof clean === 'object' ? clean : {}), keep };
  return { reset: () => void (ours = null) };
}
