import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { PrecompressorError } from '../../errors.js';
import { TEMP_SUFFIX } from '../../fs-atomic.js';
import { pathProblem } from '../../manifest/manifest.js';
import { absPath, relInside, hasDotSegment } from '../../paths.js';

/**
 * @typedef {{ rel: string, size: number, mtimeMs: number, dev?: number, ino?: number, link?: boolean }} WalkEntry
 *   dev, ino: the file the walk found (a symlink's target for `link`), which is the only file a
 *   worker then reads under that name (see variants/source.js)
 * @typedef {{ rel: string, code: string, message: string }} WalkFailure
 * @typedef {{ files: WalkEntry[], temps: string[], outside: string[], leftOut: { rel: string, why: string }[],
 *   failed: WalkFailure[] }} WalkResult
 */

/**
 * Every regular file under `root`, with size, mtime and identity. Symlinks are never followed into
 * folders; one to a file is taken only if its target is inside `root`. Our temps come apart (to sweep);
 * names the manifest cannot hold, and what cannot be read, are listed and the walk goes on.
 * @param {string} root absolute path
 * @param {{ dotfiles: boolean, onFolder?: (files: WalkEntry[]) => void }} opts onFolder: each folder's
 *   files (sorted by path) as the walk reads the folder, instead of `files` (then empty) in the result
 * @returns {Promise<WalkResult>}
 */
export async function walk(root, opts) {
  const realRoot = await folderOf(root);
  /** @type {WalkResult} */
  const out = { files: [], temps: [], outside: [], leftOut: [], failed: [] };
  const onFolder = opts.onFolder ?? ((/** @type {WalkEntry[]} */ files) => {
    for (const f of files) out.files.push(f);
  });
  globFolders({ root, realRoot, dotfiles: opts.dotfiles, out }, onFolder);
  if (opts.onFolder === undefined) out.files.sort(byRel);
  return out;
}

/** @param {{ rel: string }} a @param {{ rel: string }} b */
const byRel = (a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0);

/**
 * What walk() finds at these paths only, without reading a folder (watch mode's batches); a path the
 * walk would not reach is left out. ERR_PRECOMPRESSOR_DIR unless `root` is a folder.
 * @param {string} root absolute path
 * @param {Iterable<string>} rels POSIX paths relative to root
 * @param {{ dotfiles: boolean }} opts
 * @returns {Promise<WalkResult>}
 */
export async function statPaths(root, rels, opts) {
  const realRoot = await folderOf(root);
  /** @type {WalkResult} */
  const out = { files: [], temps: [], outside: [], leftOut: [], failed: [] };
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
    const dirent = /** @type {import('node:fs').Dirent} */ (/** @type {unknown} */ (
      Object.assign(st, { name: path.posix.basename(rel) })));
    sortEntry({ root, realRoot, dotfiles: opts.dotfiles, out }, rel, dirent, out.files);
  }
  out.files.sort(byRel);
  return out;
}

/**
 * Would the walk enter folder `dir` ('.' the root): not a temp folder, no symlink on the way?
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
 * @typedef {{ root: string, realRoot: string, dotfiles: boolean, out: WalkResult }} Walking
 */

/** fast-glob (its ~55 modules), loaded by the first walk: a warm run reads the folder without it (#31). */
let fastGlob = /** @type {typeof import('fast-glob') | null} */ (null);
const require = createRequire(import.meta.url);

/**
 * fast-glob's synchronous walk (no lstat waits for libuv's pool) over a readdir of ours that sorts each
 * folder's entries as it reads them and hands back only the folders to enter: one small record per
 * file (fast-glob's entry objects were most of a big run's peak memory).
 * @param {Walking} w
 * @param {(files: WalkEntry[]) => void} onFolder each folder's files, sorted by path
 */
function globFolders(w, onFolder) {
  const { root, out } = w;
  /** @param {string} dir @param {{ withFileTypes: true }} options */
  const readdirSync = (dir, options) => {
    const dirRel = relInside(root, dir) ?? '';
    const problem = dirRel === '' ? null : pathProblem(dirRel);
    if (problem !== null) {
      const why = `folder name ${problem}: its files are left out (they could not be served)`;
      out.leftOut.push({ rel: dirRel, why });
      return [];
    }
    let dirents;
    try {
      dirents = fsSync.readdirSync(dir, options);
    } catch (err) {
      if (dirRel === '') {
        const message = `Cannot walk ${root}: ${/** @type {Error} */ (err).message}`;
        throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', message, { path: root, cause: err });
      }
      if (!gone(err)) out.failed.push(failureOf(dirRel, err));
      return [];
    }
    const prefix = dirRel === '' ? '' : `${dirRel}/`;
    /** @type {WalkEntry[]} */
    const files = [];
    const folders = dirents.filter((d) => sortEntry(w, `${prefix}${d.name}`, d, files));
    onFolder(files.sort(byRel));
    return folders;
  };
  fastGlob ??= /** @type {typeof import('fast-glob')} */ (require('fast-glob'));
  fastGlob.sync('**/*', {
    cwd: root,
    dot: true,
    onlyFiles: false,
    followSymbolicLinks: false,
    unique: false, // only folders come back, each once
    fs: /** @type {any} */ ({ readdirSync }),
  });
}

/**
 * Sort one entry of a folder into temps, files or links; true for a folder to enter (not our temp
 * folders, nor dot folders without `dotfiles`).
 * @param {Walking} w
 * @param {string} rel
 * @param {import('node:fs').Dirent} d
 * @param {WalkEntry[]} files this folder's files
 */
function sortEntry(w, rel, d, files) {
  const { out, dotfiles } = w;
  if (d.name.endsWith(TEMP_SUFFIX)) {
    if (d.isFile() || d.isDirectory()) out.temps.push(rel); // never entered
    return false;
  }
  if (!dotfiles && hasDotSegment(rel)) return false;
  if (d.isDirectory()) return true;
  if (!d.isFile() && !d.isSymbolicLink()) return false; // FIFOs, sockets, devices are never sources
  const problem = pathProblem(rel);
  if (problem !== null) {
    out.leftOut.push({ rel, why: `name ${problem}: left out of the manifest (it could not be served)` });
  } else if (d.isSymbolicLink()) addLink(w, rel, files);
  else addFile(w, rel, files);
  return false;
}

/**
 * @param {Walking} w
 * @param {string} rel
 * @param {WalkEntry[]} files
 */
function addFile(w, rel, files) {
  let s;
  try {
    s = fsSync.lstatSync(`${w.root}/${rel}`); // not absPath(): per file, and rel is canonical here
  } catch (err) {
    if (!gone(err)) w.out.failed.push(failureOf(rel, err));
    return;
  }
  if (s.isFile()) files.push({ rel, size: s.size, mtimeMs: s.mtimeMs, dev: s.dev, ino: s.ino });
}

/**
 * A symlink is a file only if it resolves to one inside the root; an alias of a dotfile (env.txt →
 * .env) is a dotfile too.
 * @param {Walking} w
 * @param {string} rel
 * @param {WalkEntry[]} files
 */
function addLink(w, rel, files) {
  const target = resolveInside(w.realRoot, absPath(w.root, rel));
  if (target === null) w.out.outside.push(rel);
  else if (!w.dotfiles && hasDotSegment(target.rel)) return;
  else if (target.st.isFile()) {
    const st = target.st;
    files.push({ rel, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino, link: true });
  }
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
 * A symlink's target if it resolves inside `realRoot`, else null.
 * @param {string} realRoot
 * @param {string} link
 */
function resolveInside(realRoot, link) {
  try {
    const real = fsSync.realpathSync(link);
    const rel = relInside(realRoot, real);
    if (rel === null) return null;
    return { rel, st: fsSync.statSync(real) };
  } catch {
    return null;
  }
}
