import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { PrecompressorError } from './errors.js';
import { assertRealDir, inHeldFolder, inHeldFolderSync } from './held-folder.js';

/**
 * Flags to open a path for reading that neither follow a symlink at its last component nor block
 * on a FIFO (checked with fstat before any read). O_NOFOLLOW does not exist on Windows.
 */
const C = fsSync.constants;
export const READ_NOFOLLOW = C.O_RDONLY | (C.O_NOFOLLOW ?? 0) | (C.O_NONBLOCK ?? 0);

/**
 * Is `dir` a folder itself, not a symlink to one (false also when missing)? Checked right before a
 * path operation in a store that others may write (the variant cache's shards, the dictionary
 * store's folders): a folder swapped for a symlink would take a write or a removal outside it.
 * @param {string} dir
 */
export function isRealFolder(dir) {
  return fsSync.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** The error of a write refused by isRealFolder(). @param {string} dir */
export function notRealFolder(dir) {
  return new Error(`${dir} is not a folder (a symlink?): not written`);
}

/**
 * The whole content of `file` if it is a regular file of at most `maxBytes`, else null (missing, a
 * symlink, a FIFO or device, too big, unreadable): opened with READ_NOFOLLOW, so neither a symlink
 * nor a FIFO planted in a store others may write can redirect or block the build, and read through
 * that descriptor.
 * @param {string} file
 * @param {number} maxBytes
 * @returns {Promise<Buffer | null>}
 */
export async function readRegularFile(file, maxBytes) {
  let fh;
  try {
    fh = await fs.open(file, READ_NOFOLLOW);
    const st = await fh.stat();
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = Buffer.allocUnsafe(st.size);
    let got = 0;
    for (let r = -1; got < st.size && r !== 0; got += r) r = (await fh.read(buf, got, st.size - got, got)).bytesRead;
    return got === st.size ? buf : null;
  } catch {
    return null;
  } finally {
    await fh?.close().catch(() => {});
  }
}

/**
 * Throw (ERR_PRECOMPRESSOR_FILE) unless the folder of `target` is where its path says: no
 * component of it is a symlink now, so its real path is itself (a source's folder, before it is read).
 * Writes and removals in the compressed folder go further: through the folder held open
 * (`checkParent`, removeIfPresent(): lib/held-folder.js).
 * @param {string} target
 */
export function assertRealParent(target) {
  assertRealDir(path.dirname(target));
}

/**
 * `target`'s name in its folder held open (inHeldFolder()) when `check`, else `target` as it is.
 * @template T
 * @param {string} target
 * @param {boolean | undefined} check
 * @param {(at: string) => Promise<T>} fn
 */
function atTarget(target, check, fn) {
  if (!check) return fn(target);
  return inHeldFolder(path.dirname(target), (dir) => fn(path.join(dir, path.basename(target))));
}

/** Suffix of every temporary file we create; the walker ignores and sweeps these. */
export const TEMP_SUFFIX = '.pctmp';

/**
 * Is this (POSIX or native) path one of our temp files or folders, or inside a temp folder?
 * @param {string} p
 */
export function isTempPath(p) {
  return p.endsWith(TEMP_SUFFIX) || p.includes(`${TEMP_SUFFIX}/`) || p.includes(`${TEMP_SUFFIX}\\`);
}

/** Longest file name (bytes) the common file systems take (ext4, XFS, APFS, NTFS in UTF-16 units). */
const NAME_MAX = 255;

/**
 * A temp path in the same folder as `target`, so that rename() is atomic. When the target's name
 * is too long to carry the temp prefix and suffix within NAME_MAX, a hash of it stands in, so that
 * any target whose own name fits can be written.
 * @param {string} target
 */
export function tempPathFor(target) {
  const rand = crypto.randomBytes(6).toString('hex');
  const base = path.basename(target);
  const tail = `.${process.pid}-${rand}${TEMP_SUFFIX}`;
  const name = Buffer.byteLength(base) + 1 + tail.length <= NAME_MAX
    ? base
    : crypto.createHash('sha256').update(base).digest('hex').slice(0, 32);
  return path.join(path.dirname(target), `.${name}${tail}`);
}

/**
 * Write `data` to `target` atomically: a temp file in the same folder, fsync'd, then renamed
 * over the target. A crash at any moment leaves either the old file or the new one, never a
 * truncated one under the final name.
 * @param {string} target
 * @param {Uint8Array | string | Iterable<string>} data a string or bytes, or pieces of text written one after another
 * @param {{ mtime?: Date, checkParent?: boolean }} [opts] checkParent: the temp file made and renamed
 *   in the target's folder held open (lib/held-folder.js)
 */
export function writeAtomic(target, data, opts = {}) {
  return atTarget(target, opts.checkParent, (at) => writeAtomicAt(at, data, opts));
}

/**
 * writeAtomic() at `target` as given.
 * @param {string} target
 * @param {Uint8Array | string | Iterable<string>} data
 * @param {{ mtime?: Date }} opts
 */
async function writeAtomicAt(target, data, opts) {
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
 * Variants are not fsync'd: the rename is atomic for every reader and against a killed process,
 * and an fsync per variant made small-file runs 2-3 times slower (workers waiting on the disk).
 * After a power loss a variant may be empty or short; its size then differs from the manifest,
 * which the next run and serveStatic both check, so neither trusts it.
 * @param {string} target
 * @param {(fh: import('node:fs/promises').FileHandle) => Promise<boolean>} produce
 * @param {{ mtime?: Date, checkParent?: boolean }} [opts] checkParent: as writeAtomic()'s
 * @returns {Promise<boolean>} whether the target was written
 */
export function writeAtomicWith(target, produce, opts = {}) {
  return atTarget(target, opts.checkParent, (at) => writeAtomicWithAt(at, produce, opts));
}

/**
 * writeAtomicWith() at `target` as given.
 * @param {string} target
 * @param {(fh: import('node:fs/promises').FileHandle) => Promise<boolean>} produce
 * @param {{ mtime?: Date }} opts
 */
async function writeAtomicWithAt(target, produce, opts) {
  const tmp = tempPathFor(target);
  let fh;
  try {
    fh = await fs.open(tmp, 'wx', 0o644);
    const keep = await produce(fh);
    if (keep && opts.mtime) await fh.utimes(opts.mtime, opts.mtime);
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

/** @param {unknown} err */
const ignoreMissing = (err) => {
  if (/** @type {any} */ (err).code !== 'ENOENT') throw err;
};

/**
 * Remove a file of the compressed folder if it exists, in its folder held open (lib/held-folder.js:
 * not through a folder swapped for a symlink), unless, with `expect`, it is not the file (device and
 * inode) that was found there.
 * @param {string} file
 * @param {{ dev?: number, ino?: number }} [expect]
 */
export async function removeIfPresent(file, expect) {
  await atTarget(file, true, async (at) => {
    const st = expect?.ino === undefined ? null : fsSync.lstatSync(at, { throwIfNoEntry: false });
    if (st && (st.ino !== expect?.ino || st.dev !== expect?.dev)) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_FILE', `${file} is not the file found there ` +
        '(replaced, or a folder on its path replaced by a symlink): not removed', { path: file });
    }
    // unlink() at once (rm() would lstat first): the instant after the check is as short as it can be.
    await fs.unlink(at);
  }).catch(ignoreMissing);
}

/**
 * Synchronous twin of removeIfPresent(), for the workers.
 * @param {string} file
 */
export function removeIfPresentSync(file) {
  try {
    inHeldFolderSync(path.dirname(file), (dir) => fsSync.unlinkSync(path.join(dir, path.basename(file))));
  } catch (err) {
    ignoreMissing(err);
  }
}

/**
 * A private folder for the temp files of one run, at the top of the folder being compressed.
 * Creating a file in a big folder is slow (ext4), so variants are written here and renamed into
 * place: one insertion into the big folder instead of two (docs/benchmarks.md).
 * @param {string} root
 */
export async function makeTempDir(root) {
  const dir = path.join(root, `.precompressor-${process.pid}-${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  await fs.mkdir(dir);
  return dir;
}

/**
 * May the temp file or folder `name` be swept? Its name carries the pid of the process that made
 * it (tempPathFor(), makeTempDir()): a temp of a process that is still running belongs to a run
 * in progress (another precompressor on the same folder), and one of this process to a call
 * still running here, so only those of processes that are gone are swept. (A pid reused since
 * by an unrelated process keeps a leftover until that process ends: harmless.)
 * @param {string} name base name
 */
export function tempOwnerGone(name) {
  const m = /[.-](\d+)-[0-9a-f]+\.pctmp$/.exec(name);
  if (!m) return true;
  const pid = Number(m[1]);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return /** @type {any} */ (err).code === 'ESRCH';
  }
}

/**
 * Remove one of our temp files or temp folders (names ending in TEMP_SUFFIX only).
 * @param {string} p
 */
export async function removeTemp(p) {
  if (!p.endsWith(TEMP_SUFFIX)) throw new Error(`Refusing to remove ${p}: not a temp file of ours`);
  await atTarget(p, true, (at) => fs.rm(at, { force: true, recursive: true })).catch(ignoreMissing);
}

let tempCounter = 0;

/**
 * Synchronous twin of writeAtomicWith() for a buffer, for worker threads (where blocking is the
 * point). Like writeAtomicWith() and unlike writeAtomic(), it does not fsync: see writeAtomicWith().
 * With `tempDir` (from makeTempDir()) the temp file is made there; if that folder is on another
 * file system than the target (a mount inside the tree), it falls back to the target's folder.
 * @param {string} target
 * @param {Uint8Array} data
 * @param {{ mtime?: Date, tempDir?: string | null, checkParent?: boolean }} [opts]
 *   checkParent: renamed into the target's folder held open (lib/held-folder.js)
 */
export function writeAtomicSync(target, data, opts = {}) {
  if (!opts.checkParent) return writeAtomicSyncAt(target, data, opts);
  const dir = path.dirname(target);
  return inHeldFolderSync(dir, (at) => writeAtomicSyncAt(path.join(at, path.basename(target)), data, opts));
}

/**
 * writeAtomicSync() at `target` as given.
 * @param {string} target
 * @param {Uint8Array} data
 * @param {{ mtime?: Date, tempDir?: string | null }} opts
 * @returns {void}
 */
function writeAtomicSyncAt(target, data, opts) {
  // In a private temp folder a counter is a unique name (and cheaper than random bytes per file).
  const tmp = opts.tempDir ? path.join(opts.tempDir, `${threadId}-${tempCounter++}`) : tempPathFor(target);
  let fd;
  try {
    fd = fsSync.openSync(tmp, 'wx', 0o644);
    let off = 0;
    while (off < data.length) off += fsSync.writeSync(fd, data, off, data.length - off);
    if (opts.mtime) fsSync.futimesSync(fd, opts.mtime, opts.mtime);
    fsSync.closeSync(fd);
    fd = undefined;
    fsSync.renameSync(tmp, target);
  } catch (err) {
    if (fd !== undefined) fsSync.closeSync(fd);
    fsSync.rmSync(tmp, { force: true });
    if (opts.tempDir && /** @type {any} */ (err).code === 'EXDEV') {
      return writeAtomicSyncAt(target, data, { mtime: opts.mtime });
    }
    throw err;
  }
}
