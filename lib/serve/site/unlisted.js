import fs from 'node:fs';
import path from 'node:path';
import { manifestToHide } from './load.js';
import { servableReal } from '../bodies/index.js';
import { absPath, relInside } from '../../paths.js';
import { internalKind, LOOKUP_ORDER } from '../../site-policy.js';

/** The stat errors send answers 404 with (others are a 500). */
const SEND_404 = new Set(['ENOENT', 'ENAMETOOLONG', 'ENOTDIR']);

/**
 * Stat-based lookup of files the manifest does not list (`unlisted`), with express.static's rules; a
 * file is found only when its real path is servable. The manifest's real path is resolved on each
 * reload, and per request while it is missing, so a manifest that appears is never served.
 *
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @param {string | null} initialRealRoot real path of `opts.root`, null when it does not exist
 * @param {(rel: string) => boolean} [isListed] does the manifest (now) list this site path?
 */
export function createUnlistedLookup(opts, initialRealRoot, isListed = () => false) {
  const manifest = manifestToHide(opts);
  const realManifest = () => fs.promises.realpath(manifest).catch(() => null);
  /** @type {string | null} */
  let manifestReal = null;
  try {
    manifestReal = fs.realpathSync.native(manifest);
  } catch {
    // not there (yet): resolved per request until a reload finds it
  }
  let realRoot = initialRealRoot;
  const rules = { dotfiles: opts.dotfiles, manifestReal: null };

  /**
   * May the file whose real path is `real` be served: servableReal(), and not one of our outputs?
   * @param {string} real
   */
  async function allows(real) {
    realRoot ??= await fs.promises.realpath(opts.root).catch(() => null);
    if (!servableReal(realRoot, real, rules)) return false;
    const rel = relInside(/** @type {string} */ (realRoot), real);
    if (rel !== null && isOurOutput(rel, isListed)) return false;
    return real !== (manifestReal ?? (await realManifest()));
  }

  /**
   * @returns {Promise<{ rel: string, logical: string, real: string, dir: boolean } | null>}
   * @param {string} rel
   */
  async function tryFile(rel) {
    const logical = rel === '' ? opts.root : absPath(opts.root, rel);
    const real = await fs.promises.realpath(logical).catch(() => null);
    if (real === null || !(await allows(real))) return null;
    const st = await fs.promises.stat(real).catch(() => null);
    if (st === null) return null;
    // the root itself may be a file (express.static serves it for its mount point)
    return { rel: rel === '' ? path.basename(real) : rel, logical, real, dir: st.isDirectory() };
  }

  /**
   * @param {string[]} names
   */
  async function firstFile(names) {
    for (const rel of names) {
      const f = await tryFile(rel);
      if (f && !f.dir) return f;
    }
    return null;
  }

  /**
   * @param {{ rel: string, slash: boolean }} p parsed request path; rel '' without slash is the
   *   mount point of a mounted middleware requested without its trailing slash
   * @returns {Promise<{ rel: string, logical: string, real: string } | { redirect: true } | null>}
   */
  async function find(p) {
    realRoot ??= await fs.promises.realpath(opts.root).catch(() => null);
    if (realRoot === null) return null;
    const hit = await tryFile(p.rel);
    const under = (/** @type {string} */ name) => (p.rel === '' ? name : `${p.rel}/${name}`);
    if (p.slash) return hit?.dir ? firstFile(opts.index.map(under)) : null;
    return inOrder(hit, p.rel, opts, () => firstFile(opts.extensions.map((ext) => `${p.rel}.${ext}`)));
  }

  /** Resolve the manifest's real path again (it may have been created, deleted or re-linked). */
  async function refresh() {
    manifestReal = await realManifest();
  }

  return { find, refresh, allows, missCause: (/** @type {{ rel: string, slash: boolean }} */ p) => missCause(opts, p) };
}

/**
 * The error send's stat gives for a miss at `p`, when send answers 404 with it.
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @param {{ rel: string, slash: boolean }} p
 * @returns {Promise<Error | undefined>}
 */
async function missCause(opts, p) {
  const at = p.rel === '' ? opts.root : absPath(opts.root, p.rel);
  /** @param {string} file */
  const statError = (file) => fs.promises.stat(file).then((st) => st, (err) => err);
  let target = p.slash ? `${at}${path.sep}` : at;
  if (p.slash && opts.index.length > 0) {
    const st = await statError(target);
    if (!(st instanceof fs.Stats)) return SEND_404.has(st.code) ? st : undefined;
    target = path.join(target, opts.index[opts.index.length - 1]);
  }
  const st = await statError(target);
  return st instanceof fs.Stats || !SEND_404.has(st.code) ? undefined : st;
}

/**
 * What answers a path without a trailing slash, in the site policy's order, as for listed paths.
 * @template F
 * @param {(F & { dir: boolean }) | null} hit what is at the path on disk
 * @param {string} rel
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @param {() => Promise<F | null>} withExtension
 * @returns {Promise<F | { redirect: true } | null>}
 */
async function inOrder(hit, rel, opts, withExtension) {
  for (const step of LOOKUP_ORDER) {
    if (step === 'file' && hit && !hit.dir) return hit;
    if (step === 'folder' && hit?.dir) return opts.redirect ? { redirect: true } : null;
    if (step === 'extensions' && rel !== '' && path.posix.extname(rel) === '') {
      const found = await withExtension();
      if (found) return found;
    }
  }
  return null;
}

/**
 * Is `rel` a variant, delta or warm index name the manifest does not list (listed, it is the user's file)?
 * @param {string} rel
 * @param {(rel: string) => boolean} isListed
 */
export function isOurOutput(rel, isListed) {
  const kind = internalKind(rel, { listed: isListed(rel), manifestRel: null, dotfiles: true });
  return kind === 'variant' || kind === 'delta' || kind === 'index';
}
