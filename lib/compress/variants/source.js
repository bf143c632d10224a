import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { PrecompressorError } from '../../errors.js';
import { READ_NOFOLLOW, assertRealParent } from '../../fs-atomic.js';

/**
 * Opening a source file the walk found, where someone else may change the folder: only the very file
 * the walk saw (device and inode), never a FIFO, never through a symlink it did not take.
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
 * What a source replaced since the walk (by rename, as bundlers do) is now, if its folder is still the tree's.
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
