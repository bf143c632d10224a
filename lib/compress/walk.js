import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { PrecompressorError } from '../errors.js';
import { TEMP_SUFFIX } from '../fs-atomic.js';
import { pathProblem } from '../manifest.js';
import { absPath, relInside, hasDotSegment } from '../paths.js';

/**
 * @typedef {{ rel: string, size: number, mtimeMs: number, dev?: number, ino?: number, link?: boolean }} WalkEntry
 *   dev, ino: the file the walk found (a symlink's target for `link`), which is the only file a
 *   worker then reads under that name (see openSource() in compress-file.js)
 * @typedef {{ rel: string, code: string, message: string }} WalkFailure
 * @typedef {{ files: WalkEntry[], temps: string[], outside: string[], leftOut: { rel: string, why: string }[],
 *   failed: WalkFailure[] }} WalkResult
 */

/**
 * Every regular file under `root` (POSIX relative paths), with size, mtime and identity, in one
 * pass. Symlinks are never followed into folders; a symlink to a file is taken only if its target
 * resolves inside `root` (else reported in `outside`). Our own temp files and folders are returned
 * apart so that the caller can sweep them. A name the manifest cannot hold (pathProblem()) is left
 * out and listed in `leftOut` (a folder once, not each of its files); a folder or file that cannot
 * be read (a path over PATH_MAX, EACCES) is listed in `failed` and the walk goes on. Nothing is
 * filtered by include/exclude here: the manifest lists every file.
 * @param {string} root absolute path
 * @param {{ dotfiles: boolean }} opts
 * @returns {Promise<WalkResult>}
 */
export async function walk(root, opts) {
  const realRoot = await folderOf(root);
  /** @type {WalkResult} */
  const out = { files: [], temps: [], outside: [], leftOut: [], failed: [] };
  /** @type {string[]} */
  const links = [];
  for (const e of globEntries(root, opts.dotfiles, out)) classify(root, e, opts.dotfiles, out, links);
  return finish(root, realRoot, links, opts.dotfiles, out);
}

/**
 * What walk() finds at these paths only, without reading a folder: watch mode's batches, which
 * look at the paths their events named (and their variants' paths). A path the walk would not
 * reach is left out: under a temp folder, or under a folder that is not where its name says (a
 * symlink to a folder is never entered). ERR_PRECOMPRESSOR_DIR unless `root` is a folder.
 * @param {string} root absolute path
 * @param {Iterable<string>} rels POSIX paths relative to root
 * @param {{ dotfiles: boolean }} opts
 * @returns {Promise<WalkResult>}
 */
export async function statPaths(root, rels, opts) {
  const realRoot = await folderOf(root);
  /** @type {WalkResult} */
  const out = { files: [], temps: [], outside: [], leftOut: [], failed: [] };
  /** @type {string[]} */
  const links = [];
  /** @type {Map<string, boolean>} folder → whether the walk would enter it */
  const folders = new Map();
  for (const rel of rels) {
    const dir = path.posix.dirname(rel);
    if (!folders.has(dir)) folders.set(dir, await reachable(realRoot, root, dir));
    if (!folders.get(dir)) continue;
    let st;
    try {
      st = fsSync.lstatSync(`${root}/${rel}`); // not absPath(): per file, and rel is canonical here
    } catch (err) {
      if (!gone(err)) out.failed.push(failureOf(rel, err));
      continue;
    }
    const entry = { path: rel, dirent: Object.assign(st, { name: path.posix.basename(rel) }) };
    const e = /** @type {import('fast-glob').Entry} */ (/** @type {unknown} */ (entry));
    classify(root, e, opts.dotfiles, out, links);
  }
  return finish(root, realRoot, links, opts.dotfiles, out);
}

/**
 * Would the walk enter folder `dir` (relative, '.' for the root)? Not a temp folder, and its real
 * path is its name under the root (no folder on the way is a symlink). Dot folders: see classify().
 * @param {string} realRoot
 * @param {string} root
 * @param {string} dir
 */
async function reachable(realRoot, root, dir) {
  if (dir === '.') return true;
  if (dir.split('/').some((name) => name.endsWith(TEMP_SUFFIX))) return false;
  const real = await fs.realpath(absPath(root, dir)).catch(() => null);
  return real !== null && relInside(realRoot, real) === dir;
}

/**
 * Resolve the symlinks found (taken when their target is a file inside the root), sort the files.
 * @param {string} root
 * @param {string} realRoot
 * @param {string[]} links
 * @param {boolean} dotfiles
 * @param {WalkResult} out
 */
async function finish(root, realRoot, links, dotfiles, out) {
  for (const rel of links) {
    const target = await resolveInside(realRoot, absPath(root, rel));
    if (target === null) out.outside.push(rel);
    // an alias of a dotfile (env.txt → .env) is a dotfile too: judged by its target as well as its name
    else if (!dotfiles && hasDotSegment(target.rel)) continue;
    else if (target.st.isFile()) {
      const st = target.st;
      out.files.push({ rel, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino, link: true });
    }
  }
  out.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return out;
}

/**
 * The real path of `root`; ERR_PRECOMPRESSOR_DIR unless it is a folder.
 * @param {string} root
 */
async function folderOf(root) {
  let st;
  try {
    st = await fs.stat(root);
  } catch (err) {
    const code = /** @type {any} */ (err).code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`;
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Directory ${root} ${why}`, { path: root, cause: err });
  }
  if (!st.isDirectory()) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `${root} is not a directory`, { path: root });
  }
  return fs.realpath(root);
}

/**
 * fast-glob's synchronous walk (its lstat calls do not each wait for a turn on libuv's thread
 * pool; the walk runs once per pass, before any other work), with a readdir that records a folder
 * it cannot read, or whose name the manifest cannot hold, and goes on. It also decides which folders
 * are entered: dot folders only with `dotfiles`, our temp folders never (but both are listed, so that
 * our own temps, ".name.pctmp", are swept).
 * @param {string} root
 * @param {boolean} dotfiles
 * @param {WalkResult} out
 * @returns {import('fast-glob').Entry[]}
 */
function globEntries(root, dotfiles, out) {
  /** @param {string} dir @param {{ withFileTypes: true }} options */
  const readdirSync = (dir, options) => {
    const dirRel = relInside(root, dir) ?? '';
    const name = path.basename(dirRel);
    if (name.endsWith(TEMP_SUFFIX) || (!dotfiles && name.startsWith('.'))) return []; // listed, never entered
    const problem = dirRel === '' ? null : pathProblem(dirRel);
    if (problem !== null) {
      const why = `folder name ${problem}: its files are left out (they could not be served)`;
      out.leftOut.push({ rel: dirRel, why });
      return [];
    }
    try {
      return fsSync.readdirSync(dir, options);
    } catch (err) {
      if (dirRel === '') {
        const message = `Cannot walk ${root}: ${/** @type {Error} */ (err).message}`;
        throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', message, { path: root, cause: err });
      }
      if (!gone(err)) out.failed.push(failureOf(dirRel, err));
      return [];
    }
  };
  const entries = fg.sync('**/*', {
    cwd: root,
    dot: true,
    onlyFiles: false,
    followSymbolicLinks: false,
    objectMode: true,
    fs: /** @type {any} */ ({ readdirSync }),
  });
  return /** @type {import('fast-glob').Entry[]} */ (/** @type {unknown} */ (entries));
}

/**
 * Sort one entry of the walk into temps, files or links.
 * @param {string} root
 * @param {import('fast-glob').Entry} e
 * @param {boolean} dotfiles
 * @param {WalkResult} out
 * @param {string[]} links symlinks found, resolved by the caller
 */
function classify(root, e, dotfiles, out, links) {
  const d = e.dirent;
  if (d.name.endsWith(TEMP_SUFFIX)) {
    if (d.isFile() || d.isDirectory()) out.temps.push(e.path); // never entered
    return;
  }
  if (!dotfiles && hasDotSegment(e.path)) return;
  if (d.isDirectory() || (!d.isFile() && !d.isSymbolicLink())) return; // FIFOs, sockets, devices are never sources
  const problem = pathProblem(e.path);
  if (problem !== null) {
    out.leftOut.push({ rel: e.path, why: `name ${problem}: left out of the manifest (it could not be served)` });
  }
  else if (d.isSymbolicLink()) links.push(e.path);
  else addFile(root, e.path, out);
}

/**
 * lstat a regular file found by readdir and list it; a file that cannot be stat'ed is a failure.
 * @param {string} root
 * @param {string} rel
 * @param {WalkResult} out
 */
function addFile(root, rel, out) {
  let s;
  try {
    s = fsSync.lstatSync(`${root}/${rel}`); // not absPath(): per file, and rel is canonical here
  } catch (err) {
    if (!gone(err)) out.failed.push(failureOf(rel, err));
    return;
  }
  if (s.isFile()) out.files.push({ rel, size: s.size, mtimeMs: s.mtimeMs, dev: s.dev, ino: s.ino });
}

/** Gone since its folder was read: not a failure. */
const gone = (/** @type {unknown} */ err) => ['ENOENT', 'ENOTDIR'].includes(/** @type {any} */ (err).code);

/**
 * @param {string} rel
 * @param {unknown} err
 * @returns {WalkFailure}
 */
function failureOf(rel, err) {
  const e = /** @type {any} */ (err);
  const why = e.code === 'ENAMETOOLONG' ? 'its path is longer than the system allows' : 'cannot be read';
  return { rel, code: e.code ?? 'ERR_PRECOMPRESSOR_FILE', message: `${why} (${e.code ?? e.message})` };
}

/**
 * A symlink's target if it resolves inside `realRoot` (its POSIX path relative to it, and its
 * stats), else null (also for dangling links).
 * @param {string} realRoot
 * @param {string} link
 */
async function resolveInside(realRoot, link) {
  try {
    const real = await fs.realpath(link);
    const rel = relInside(realRoot, real);
    if (rel === null) return null;
    return { rel, st: await fs.stat(real) };
  } catch {
    return null;
  }
}
