import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Site paths are POSIX and relative to the site's root (`assets/app.js`), as the manifest keys them.

/**
 * @param {string} root
 * @param {string} rel
 */
export function absPath(root, rel) {
  return path.join(root, ...rel.split('/'));
}

/**
 * Is `p` the folder `root` or inside it (`/public-x` is not inside `/public`)? Both absolute and normalized.
 * @param {string | null} root
 * @param {string} p
 */
export function isInside(root, p) {
  if (root === null) return false;
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * Site path of `abs` under `root`; null for `root` itself or outside it.
 * @param {string} root
 * @param {string} abs
 * @returns {string | null}
 */
export function relInside(root, abs) {
  const r = path.resolve(root);
  const a = path.resolve(abs);
  if (a === r || !isInside(r, a)) return null;
  return a.slice(r.endsWith(path.sep) ? r.length : r.length + 1).split(path.sep).join('/');
}

/**
 * Does a segment of site path `rel` start with a dot (a dotfile, or a file in a dot folder)?
 * @param {string} rel
 */
export function hasDotSegment(rel) {
  return rel.startsWith('.') || rel.includes('/.');
}

/**
 * The folder of this tool's caches, found as find-cache-dir finds it (docs/cache.md): `$CACHE_DIR`,
 * else the project's `node_modules/.cache`, else the OS cache folder. Nothing is created here.
 * @param {string} [from] where the lookup starts (default: the working directory)
 * @returns {string} an absolute path
 */
export function cacheRoot(from = process.cwd()) {
  const env = process.env.CACHE_DIR;
  if (env && !['true', 'false', '1', '0'].includes(env)) return path.resolve(env, 'precompressor');
  const project = packageDir(path.resolve(from));
  if (project !== null && writable(path.join(project, 'node_modules'))) {
    return path.join(project, 'node_modules', '.cache', 'precompressor');
  }
  return path.join(osCacheDir(), 'precompressor');
}

/**
 * @param {string} dir
 */
function packageDir(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d;
    if (path.dirname(d) === d) return null;
  }
}

/**
 * @param {string} dir
 */
function writable(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    try {
      fs.accessSync(d, fs.constants.W_OK);
      return true;
    } catch (err) {
      if (/** @type {any} */ (err).code !== 'ENOENT' || path.dirname(d) === d) return false;
    }
  }
}

function osCacheDir() {
  const home = os.homedir();
  if (process.platform === 'win32') return process.env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local');
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches');
  return process.env.XDG_CACHE_HOME || path.join(home, '.cache');
}
