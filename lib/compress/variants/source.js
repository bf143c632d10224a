import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { PrecompressorError } from '../../errors.js';
import { READ_NOFOLLOW, assertRealParent } from '../../fs-atomic.js';

/**
 * Opening a source file that the walk found, in a folder that someone else may be changing (an
 * upload folder compressed by a privileged job): never through a symlink at its last component
 * (unless the walk took a symlink there), never blocking on a FIFO, and only the very file the
 * walk saw (same device and inode). A folder on its path swapped for a symlink since the walk
 * makes the same path name another file, outside the folder: that file is not read.
 *
 * @typedef {{ dev?: number, ino?: number, link?: boolean }} Identity what the walk saw (see WalkEntry)
 */

const READ_NONBLOCK = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/** @param {Identity | undefined} expect */
const flagsFor = (expect) => (expect?.link ? READ_NONBLOCK : READ_NOFOLLOW);

/**
 * Throw unless `st` (of the descriptor just opened for `abs`) is a regular file and the one the
 * walk saw. A replaced file is `changed` (retryable: see reidentify()).
 * @param {string} abs
 * @param {fs.Stats} st
 * @param {Identity | undefined} expect
 */
function assertSource(abs, st, expect) {
  if (!st.isFile()) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_FILE', `${abs} is not a regular file any more: not read`,
      { path: abs });
  }
  if (expect?.ino === undefined || (st.ino === expect.ino && st.dev === expect.dev)) return;
  const err = new PrecompressorError('ERR_PRECOMPRESSOR_FILE',
    `${abs} is not the file the walk found (replaced meanwhile): not read`, { path: abs });
  throw Object.assign(err, { changed: true, replaced: true });
}

/**
 * Open `abs` for reading (see above); the caller closes the descriptor.
 * @param {string} abs
 * @param {Identity} [expect]
 * @returns {{ fd: number, st: fs.Stats }}
 */
export function openSourceSync(abs, expect) {
  const fd = fs.openSync(abs, flagsFor(expect));
  try {
    const st = fs.fstatSync(fd);
    assertSource(abs, st, expect);
    return { fd, st };
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/**
 * openSourceSync() for the main thread: a FileHandle; the caller closes it.
 * @param {string} abs
 * @param {Identity} [expect]
 * @returns {Promise<{ fh: fsp.FileHandle, st: fs.Stats }>}
 */
export async function openSource(abs, expect) {
  const fh = await fsp.open(abs, flagsFor(expect));
  try {
    const st = await fh.stat();
    assertSource(abs, st, expect);
    return { fh, st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * What a source that was replaced since the walk is now, to read it again: the file now at that
 * name, if its folder is still the folder of the tree (a file rewritten by rename, as bundlers and
 * editors do); a folder on its path swapped for a symlink throws (not retryable).
 * @template {Identity & { abs: string }} T
 * @param {T} t
 * @returns {T}
 */
export function reidentify(t) {
  if (t.ino === undefined) return t;
  assertRealParent(t.abs);
  const st = t.link ? fs.statSync(t.abs) : fs.lstatSync(t.abs);
  return { ...t, dev: st.dev, ino: st.ino };
}
