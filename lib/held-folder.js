import fs from 'node:fs';
import { PrecompressorError } from './errors.js';

// A folder of the tree held open for a rename, unlink or create in it: Node has no renameat(), but
// `/proc/self/fd/<fd>/<name>` resolves through the descriptor, so a folder swapped for a symlink cannot
// take the operation elsewhere. Without /proc, the folder's real path is checked right before.

const C = fs.constants;
const DIR_FLAGS = C.O_RDONLY | (C.O_DIRECTORY ?? 0) | (C.O_NOFOLLOW ?? 0);

/** @type {boolean | null} */
let usable = null;

/** Does `/proc/self/fd/<fd>` name a folder held open here (checked once)? */
export function procFdWorks() {
  if (usable !== null) return usable;
  let fd;
  try {
    fd = fs.openSync('/', DIR_FLAGS);
    usable = fs.readlinkSync(`/proc/self/fd/${fd}`) === '/' && fs.statSync(`/proc/self/fd/${fd}/`).isDirectory();
  } catch {
    usable = false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  return usable;
}

/**
 * @param {string} dir
 * @param {string | null} real what it resolves to, when known
 */
function swapped(dir, real) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_FILE', `${dir} now resolves to ${real ?? 'another folder'} ` +
    '(a folder on its path was replaced by a symlink): nothing written or removed there', { path: dir });
}

/**
 * Throw unless the folder `dir` is where its path says; a missing one passes (nothing to write through).
 * @param {string} dir absolute, on the tree's real path
 */
export function assertRealDir(dir) {
  let real;
  try {
    real = fs.realpathSync.native(dir);
  } catch (err) {
    if (/** @type {any} */ (err).code === 'ENOENT') return;
    throw err;
  }
  if (real !== dir) throw swapped(dir, real);
}

/**
 * Check the folder just opened on `fd` for `dir`: the kernel's path of it is `dir`.
 * @param {number} fd
 * @param {string} dir
 */
function checkHeld(fd, dir) {
  const real = fs.readlinkSync(`/proc/self/fd/${fd}`);
  if (real !== dir) throw swapped(dir, real);
}

/**
 * An error of opening `dir`: a symlink at its last component is a swapped folder.
 * @param {unknown} err
 * @param {string} dir
 */
function openError(err, dir) {
  const code = /** @type {any} */ (err).code;
  if (code !== 'ELOOP' && code !== 'ENOTDIR') return err;
  let real = null;
  try {
    real = fs.realpathSync.native(dir);
  } catch {
    // dangling: said as "another folder"
  }
  return swapped(dir, real);
}

/**
 * Folders held open, kept for the next operation in the same folder (a pass writes a file's
 * variants one after another in its folder): each use checks again that the folder held is where
 * its path says (checkHeld(), one readlink) instead of opening it again. At most MAX_IDLE are kept
 * unused; one in use is never closed under its operation.
 * @type {Map<string, { fd: number, users: number }>}
 */
const held = new Map();
const MAX_IDLE = 8;

/**
 * The folder `dir` held open and checked now: a kept descriptor still at `dir`, else a new one.
 * @param {string} dir
 */
function acquire(dir) {
  const kept = held.get(dir);
  if (kept !== undefined) {
    held.delete(dir);
    if (fs.readlinkSync(`/proc/self/fd/${kept.fd}`) === dir) {
      held.set(dir, kept); // the most recently used last
      kept.users++;
      return kept;
    }
    if (kept.users === 0) fs.closeSync(kept.fd); // moved, swapped or removed since: opened again below
    else kept.users = -kept.users; // closed by its last user
  }
  let fd;
  try {
    fd = fs.openSync(dir, DIR_FLAGS);
  } catch (err) {
    throw openError(err, dir);
  }
  try {
    checkHeld(fd, dir);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  const h = { fd, users: 1 };
  held.set(dir, h);
  return h;
}

/** @param {{ fd: number, users: number }} h */
function release(h) {
  if (h.users < 0) {
    if (++h.users === 0) fs.closeSync(h.fd); // dropped from `held` while in use
    return;
  }
  h.users--;
  let idle = 0;
  for (const x of held.values()) if (x.users === 0) idle++;
  for (const [dir, x] of held) {
    if (idle <= MAX_IDLE) break;
    if (x.users !== 0) continue;
    held.delete(dir);
    fs.closeSync(x.fd);
    idle--;
  }
}

/** Close the folders kept unused (the end of a pass: a long-lived process holds none between passes). */
export function releaseHeldFolders() {
  for (const [dir, x] of held) {
    if (x.users !== 0) continue;
    held.delete(dir);
    fs.closeSync(x.fd);
  }
}

/**
 * Run `fn` with the path to use for the folder `dir`, held open and checked. Throws
 * ERR_PRECOMPRESSOR_FILE when `dir` is not where its path says, ENOENT when missing (with /proc).
 * @template T
 * @param {string} dir absolute, on the tree's real path
 * @param {(at: string) => T} fn
 * @returns {T}
 */
export function inHeldFolderSync(dir, fn) {
  if (!procFdWorks()) {
    assertRealDir(dir);
    return fn(dir);
  }
  const h = acquire(dir);
  try {
    return fn(`/proc/self/fd/${h.fd}`);
  } finally {
    release(h);
  }
}

/**
 * The folder stays held until `fn`'s promise settles.
 * @template T
 * @param {string} dir
 * @param {(at: string) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function inHeldFolder(dir, fn) {
  if (!procFdWorks()) {
    assertRealDir(dir);
    return fn(dir);
  }
  const h = acquire(dir);
  try {
    return await fn(`/proc/self/fd/${h.fd}`);
  } finally {
    release(h);
  }
}

/**
 * Run `fn` for several operations in the folder `dir` (a file's variants) with one check: where
 * /proc/self/fd works, `at` names the folder held open and `held` is true (the operations through it
 * need no check of their own); elsewhere `at` is `dir` and each operation checks it as usual.
 * @template T
 * @param {string} dir
 * @param {(at: string, held: boolean) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function inHeldFolderOnce(dir, fn) {
  if (!procFdWorks()) return fn(dir, false);
  return inHeldFolder(dir, (at) => fn(at, true));
}
