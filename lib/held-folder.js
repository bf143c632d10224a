import fs from 'node:fs';
import fsp from 'node:fs/promises';
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
  let fd;
  try {
    fd = fs.openSync(dir, DIR_FLAGS);
  } catch (err) {
    throw openError(err, dir);
  }
  try {
    checkHeld(fd, dir);
    return fn(`/proc/self/fd/${fd}`);
  } finally {
    fs.closeSync(fd);
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
  const fh = await fsp.open(dir, DIR_FLAGS).catch((err) => {
    throw openError(err, dir);
  });
  try {
    checkHeld(fh.fd, dir);
    return await fn(`/proc/self/fd/${fh.fd}`);
  } finally {
    await fh.close();
  }
}
