import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

/** Suffix of every temporary file we create; the walker ignores and sweeps these. */
export const TEMP_SUFFIX = '.pctmp';

/** A temp path in the same folder as `target`, so that rename() is atomic. */
export function tempPathFor(target) {
  const rand = crypto.randomBytes(6).toString('hex');
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}-${rand}${TEMP_SUFFIX}`);
}

/**
 * Write `data` to `target` atomically: a temp file in the same folder, fsync'd, then renamed
 * over the target. A crash at any moment leaves either the old file or the new one, never a
 * truncated one under the final name.
 * @param {string} target
 * @param {Uint8Array | string} data
 * @param {{ mtime?: Date }} [opts]
 */
export async function writeAtomic(target, data, opts = {}) {
  const tmp = tempPathFor(target);
  let fh;
  try {
    fh = await fs.open(tmp, 'wx', 0o644);
    await fh.writeFile(data);
    await fh.datasync();
    if (opts.mtime) await fh.utimes(opts.mtime, opts.mtime);
    await fh.close();
    fh = undefined;
    await fs.rename(tmp, target);
  } catch (err) {
    if (fh) await fh.close().catch(() => {});
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * Stream into a temp file next to `target`, then rename. `produce(fileHandle)` writes the
 * content and returns false to discard it instead (the temp file is removed, target untouched).
 * @param {string} target
 * @param {(fh: import('node:fs/promises').FileHandle) => Promise<boolean>} produce
 * @param {{ mtime?: Date }} [opts]
 * @returns {Promise<boolean>} whether the target was written
 */
export async function writeAtomicWith(target, produce, opts = {}) {
  const tmp = tempPathFor(target);
  let fh;
  try {
    fh = await fs.open(tmp, 'wx', 0o644);
    const keep = await produce(fh);
    if (keep) {
      await fh.datasync();
      if (opts.mtime) await fh.utimes(opts.mtime, opts.mtime);
    }
    await fh.close();
    fh = undefined;
    if (!keep) {
      await fs.rm(tmp, { force: true });
      return false;
    }
    await fs.rename(tmp, target);
    return true;
  } catch (err) {
    if (fh) await fh.close().catch(() => {});
    await fs.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/** Remove a file if it exists. */
export async function removeIfPresent(file) {
  await fs.rm(file, { force: true });
}

/**
 * Synchronous twin of writeAtomic(), for worker threads (where blocking is the point).
 * @param {string} target
 * @param {Uint8Array} data
 * @param {{ mtime?: Date }} [opts]
 */
export function writeAtomicSync(target, data, opts = {}) {
  const tmp = tempPathFor(target);
  let fd;
  try {
    fd = fsSync.openSync(tmp, 'wx', 0o644);
    let off = 0;
    while (off < data.length) off += fsSync.writeSync(fd, data, off, data.length - off);
    fsSync.fdatasyncSync(fd);
    if (opts.mtime) fsSync.futimesSync(fd, opts.mtime, opts.mtime);
    fsSync.closeSync(fd);
    fd = undefined;
    fsSync.renameSync(tmp, target);
  } catch (err) {
    if (fd !== undefined) fsSync.closeSync(fd);
    fsSync.rmSync(tmp, { force: true });
    throw err;
  }
}
