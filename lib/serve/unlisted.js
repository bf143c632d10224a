import fs from 'node:fs';
import path from 'node:path';
import { isInside } from './load.js';
import { isTempPath } from '../fs-atomic.js';

/**
 * Stat-based lookup of files that the manifest does not list (only with `unlisted`): a request
 * path → the real file to serve, a folder redirect, or null. A file is found only when its real
 * path (symlinks resolved) is inside the real root, is not one of our temp files and is not the
 * manifest, reached under any name.
 *
 * The manifest's real path is resolved once, at start and again on each `refresh()` (the
 * middleware calls it on every reload, which the watcher triggers when the manifest is written,
 * replaced or deleted). While the manifest does not exist it is resolved per request, so a
 * manifest that appears later is never served before the next reload.
 *
 * @param {Readonly<import('./options.js').ServeOptions>} opts
 * @param {string} realRoot real path of `opts.root`
 */
export function createUnlistedLookup(opts, realRoot) {
  const realManifest = () => (opts.manifest === null ? null : fs.promises.realpath(opts.manifest).catch(() => null));
  /** @type {string | null} */
  let manifestReal = null;
  try {
    if (opts.manifest !== null) manifestReal = fs.realpathSync.native(opts.manifest);
  } catch {
    // not there (yet): resolved per request until a reload finds it
  }

  async function isManifest(real) {
    if (opts.manifest === null) return false;
    return real === (manifestReal ?? (await realManifest()));
  }

  async function tryFile(rel) {
    const logical = path.join(opts.root, ...rel.split('/'));
    const real = await fs.promises.realpath(logical).catch(() => null);
    if (real === null || !isInside(realRoot, real) || isTempPath(real)) return null;
    if (await isManifest(real)) return null;
    const st = await fs.promises.stat(real).catch(() => null);
    if (st === null) return null;
    return { rel, logical, real, dir: st.isDirectory() };
  }

  /**
   * @param {{ rel: string, slash: boolean }} p parsed request path
   * @returns {Promise<{ rel: string, logical: string, real: string } | { redirect: true } | null>}
   */
  async function find(p) {
    const hit = p.rel === '' ? { rel: '', logical: opts.root, real: realRoot, dir: true } : await tryFile(p.rel);
    if (hit && !hit.dir && !p.slash) return hit;
    if (hit && hit.dir && !p.slash) return opts.redirect ? { redirect: true } : null;
    if (hit && hit.dir) {
      for (const name of opts.index) {
        const f = await tryFile(p.rel === '' ? name : `${p.rel}/${name}`);
        if (f && !f.dir) return f;
      }
      return null;
    }
    if (!hit && !p.slash && p.rel !== '') {
      for (const ext of opts.extensions) {
        const f = await tryFile(`${p.rel}.${ext}`);
        if (f && !f.dir) return f;
      }
    }
    return null;
  }

  /** Resolve the manifest's real path again (it may have been created, deleted or re-linked). */
  async function refresh() {
    manifestReal = await realManifest();
  }

  return { find, refresh };
}
