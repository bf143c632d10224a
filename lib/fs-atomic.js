// Writes that readers may see, each a temp file renamed into place, and the reads and removals
// that a symlink or FIFO planted in the tree cannot redirect.
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
 * `fs.statSync`/`lstatSync` that give undefined for a path that is not there, through a file on its
 * way too: `throwIfNoEntry: false` still throws ENOTDIR on Node 22.12.
 * @param {string} file
 * @param {boolean} [link] lstat: the symlink itself
 * @returns {import('node:fs').Stats | undefined}
 */
export function statIfThere(file, link = false) {
  try {
    return link ? fsSync.lstatSync(file) : fsSync.statSync(file);
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes(/** @type {NodeJS.ErrnoException} */ (err).code ?? '')) return undefined;
    throw err;
  }
}

/**
 * Is `dir` a folder itself, not a symlink to one? Checked right before a path operation in a store
 * others may write: a folder swapped for a symlink would take a write outside it.
 * @param {string} dir
 */
export function isRealFolder(dir) {
  return statIfThere(dir, true)?.isDirectory() ?? false;
}

/** The error of a write refused by isRealFolder(). @param {string} dir */
export function notRealFolder(dir) {
  return new Error(`${dir} is not a folder (a symlink?): not written`);
}

/**
 * The content of `file` if it is a regular file of at most `maxBytes`, else null: a symlink or FIFO
 * planted in a store others may write can neither redirect nor block the build.
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
 * Throw (ERR_PRECOMPRESSOR_FILE) unless no component of `target`'s folder is a symlink now.
 * @param {string} target
 */
export function assertRealParent(target) {
  assertRealDir(path.dirname(target));
}

/**
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

/** @param {string} p a POSIX or native path */
export function isTempPath(p) {
  return p.endsWith(TEMP_SUFFIX) || p.includes(`${TEMP_SUFFIX}/`) || p.includes(`${TEMP_SUFFIX}\\`);
}

/** Longest file name (bytes) the common file systems take (ext4, XFS, APFS, NTFS in UTF-16 units). */
const NAME_MAX = 255;

/**
 * A temp path in `target`'s folder, so that rename() is atomic; a hash stands in for a name too long
 * to carry the temp prefix and suffix.
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
 * Write `data` to `target` atomically: a temp file, fsync'd, renamed over it (a crash leaves the old
 * file or the new one).
 * @param {string} target
 * @param {Uint8Array | string | Iterable<string>} data a string or bytes, or pieces of text written one after another
 * @param {{ mtime?: Date, checkParent?: boolean }} [opts] checkParent: the temp file made and renamed
 *   in the target's folder held open (lib/held-folder.js)
 */
export function writeAtomic(target, data, opts = {}) {
  return atTarget(target, opts.checkParent, (at) => writeAtomicAt(at, data, opts));
}

/**
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
 * Stream into a temp file next to `target` (`produce` returns false to discard it), then rename.
 * No fsync: it made small-file runs 2-3 times slower, and a variant cut by a power loss has a size
 * the manifest does not, which the next run and serveStatic both check.
 * @param {string} target
 * @param {(fh: import('node:fs/promises').FileHandle) => Promise<boolean>} produce
 * @param {{ mtime?: Date, checkParent?: boolean }} [opts] checkParent: as writeAtomic()'s
 * @returns {Promise<boolean>} whether the target was written
 */
export function writeAtomicWith(target, produce, opts = {}) {
  return atTarget(target, opts.checkParent, (at) => writeAtomicWithAt(at, produce, opts));
}

/**
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
 * Remove a file of the compressed folder if it exists (and is the file `expect` found there), in its
 * folder held open: not through a folder swapped for a symlink.
 * @param {string} file
 * @param {{ dev?: number, ino?: number }} [expect]
 */
export async function removeIfPresent(file, expect) {
  await atTarget(file, true, async (at) => {
    const st = expect?.ino === undefined ? null : statIfThere(at, true);
    if (st && (st.ino !== expect?.ino || st.dev !== expect?.dev)) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_FILE', `${file} is not the file found there ` +
        '(replaced, or a folder on its path replaced by a symlink): not removed', { path: file });
    }
    // unlink() at once (rm() would lstat first): the instant after the check is as short as it can be.
    await fs.unlink(at);
  }).catch(ignoreMissing);
}

/**
 * @param {string} file
 * @param {{ held?: boolean }} [opts] held: `file` names it through its folder held open already
 */
export function removeIfPresentSync(file, opts = {}) {
  try {
    if (opts.held) fsSync.unlinkSync(file);
    else inHeldFolderSync(path.dirname(file), (dir) => fsSync.unlinkSync(path.join(dir, path.basename(file))));
  } catch (err) {
    ignoreMissing(err);
  }
}

/**
 * A folder for one run's temp files at the top of the tree: creating a file in a big folder is slow
 * (ext4), so a variant made here and renamed costs one insertion there, not two.
 * @param {string} root
 */
export async function makeTempDir(root) {
  const dir = path.join(root, `.precompressor-${process.pid}-${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  await fs.mkdir(dir);
  return dir;
}

/**
 * May the temp `name` be swept? Only if the process whose pid it carries is gone: a live one may be
 * another run on the same folder (a reused pid keeps a leftover a while: harmless).
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
 * @param {string} p
 */
export async function removeTemp(p) {
  if (!p.endsWith(TEMP_SUFFIX)) throw new Error(`Refusing to remove ${p}: not a temp file of ours`);
  // Synchronous: a run's temp folder holds a few emptied folders (one per thread), and rm's walk on
  // libuv's pool would take a hop per entry, queued behind the encodes still running there.
  try {
    const rm = (/** @type {string} */ dir) =>
      fsSync.rmSync(path.join(dir, path.basename(p)), { force: true, recursive: true });
    inHeldFolderSync(path.dirname(p), rm);
  } catch (err) {
    ignoreMissing(err);
  }
}

let tempCounter = 0;

/**
 * writeAtomicWith() for a buffer, in worker threads. The temp file goes in `tempDir` unless that is
 * on another file system than the target (a mount inside the tree).
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
