import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { PrecompressorError } from '../errors.js';
import { TEMP_SUFFIX, isTempPath } from '../fs-atomic.js';
import { relInside, hasDotSegment } from '../paths.js';

/**
 * @typedef {{ rel: string, size: number, mtimeMs: number }} WalkEntry
 * @typedef {{ files: WalkEntry[], temps: string[], outside: string[] }} WalkResult
 */

/**
 * Every regular file under `root` (POSIX relative paths), with size and mtime, in one pass.
 * Symlinks are never followed into folders; a symlink to a file is taken only if its target
 * resolves inside `root` (else reported in `outside`). Our own temp files and folders are returned apart
 * so that the caller can sweep them. Nothing is filtered by include/exclude here: the manifest
 * lists every file.
 * @param {string} root absolute path
 * @param {{ dotfiles: boolean, ignore?: string[] }} opts
 * @returns {Promise<WalkResult>}
 */
export async function walk(root, opts) {
  let st;
  try {
    st = await fs.stat(root);
  } catch (err) {
    const code = /** @type {any} */ (err).code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`;
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Directory ${root} ${why}`, { path: root, cause: err });
  }
  if (!st.isDirectory()) throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `${root} is not a directory`, { path: root });
  const realRoot = await fs.realpath(root);

  const entries = await fgWalk({
    cwd: root,
    // Dot entries are always listed so that our own temp files (".name.pctmp") are found and
    // swept; dot folders are not entered unless dotfiles are wanted.
    dot: true,
    onlyFiles: false,
    followSymbolicLinks: false,
    objectMode: true,
    ignore: [...(opts.ignore ?? []), ...(opts.dotfiles ? [] : ['**/.*/**'])],
    suppressErrors: false,
  }).catch((err) => {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Cannot walk ${root}: ${err.message}`, { path: root, cause: err });
  });

  /** @type {WalkEntry[]} */
  const files = [];
  const temps = [];
  const outside = [];
  for (const e of entries) {
    if (e.dirent.isDirectory() && !e.path.endsWith(TEMP_SUFFIX)) continue;
    if (isTempPath(e.path) && !e.path.endsWith(TEMP_SUFFIX)) continue; // inside a temp folder (listed with dotfiles)
    // Our own lstat rather than fast-glob's `stats` option: 160 against 270 ms for 21,000 entries.
    const s = lstatOrNull(`${root}/${e.path}`);
    if (s === null) continue; // gone since the folder was read
    if (e.path.endsWith(TEMP_SUFFIX)) {
      if (s.isFile() || s.isDirectory()) temps.push(e.path);
      continue;
    }
    if (!opts.dotfiles && hasDotSegment(e.path)) continue;
    if (s.isFile()) {
      files.push({ rel: e.path, size: s.size, mtimeMs: s.mtimeMs });
    } else if (s.isSymbolicLink()) {
      const target = await resolveInside(realRoot, path.join(root, e.path));
      if (target === null) outside.push(e.path);
      // an alias of a dotfile (env.txt → .env) is a dotfile too: judged by its target as well as its name
      else if (!opts.dotfiles && hasDotSegment(target.rel)) continue;
      else if (target.st.isFile()) files.push({ rel: e.path, size: target.st.size, mtimeMs: target.st.mtimeMs });
    }
  }
  // Temp folders (makeTempDir) live at the top; the glob does not list dot folders' own entries.
  for (const d of await fs.readdir(root, { withFileTypes: true })) {
    if (d.isDirectory() && d.name.endsWith(TEMP_SUFFIX) && !temps.includes(d.name)) temps.push(d.name);
  }
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, temps, outside };
}

/**
 * fast-glob's synchronous walk: its lstat calls do not each wait for a turn on libuv's thread
 * pool, which made the async walk of 21,000 entries 15-30 % slower here. Sync is fine: the walk
 * runs once per pass, before any other work.
 * @param {import('fast-glob').Options} options
 */
async function fgWalk(options) {
  return /** @type {import('fast-glob').Entry[]} */ (/** @type {unknown} */ (fg.sync('**/*', options)));
}

/**
 * lstat, or null when the entry no longer exists.
 * @param {string} p
 */
function lstatOrNull(p) {
  try {
    return fsSync.lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch (err) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Cannot read ${p}: ${/** @type {Error} */ (err).message}`, { path: p, cause: err });
  }
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
