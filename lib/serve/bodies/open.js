import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isTempPath } from '../../fs-atomic.js';
import { isInside, relInside, hasDotSegment } from '../../paths.js';

/**
 * Opening a file to serve it where a folder may be swapped for a symlink, or a file for a FIFO, at any
 * moment: no final symlink, no waiting on a FIFO, and the real path checked on the descriptor itself.
 */

const C = fs.constants;
/** O_NOCTTY: a terminal device planted in the folder must not become our controlling terminal. */
export const OPEN_FLAGS = C.O_RDONLY | (C.O_NOFOLLOW ?? 0) | (C.O_NONBLOCK ?? 0) | (C.O_NOCTTY ?? 0);

/** `/proc/self/fd/N` names the descriptor's file exactly as realpath(3) would (detected once, at run time). */
let procFd = /** @type {boolean | null} */ (null);

function hasProcFd() {
  if (procFd !== null) return procFd;
  procFd = false;
  const probe = fileURLToPath(import.meta.url);
  let fd = -1;
  try {
    fd = fs.openSync(probe, 'r');
    procFd = fs.readlinkSync(`/proc/self/fd/${fd}`) === fs.realpathSync.native(probe);
  } catch {
    // no procfs (macOS, Windows, BSD): the portable fallback
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
  return procFd;
}

const DELETED = ' (deleted)';

/**
 * @param {string} link
 */
function procPath(link) {
  return link.endsWith(DELETED) ? link.slice(0, -DELETED.length) : link;
}

const sameFile = (/** @type {fs.Stats} */ a, /** @type {fs.Stats} */ b) => a.dev === b.dev && a.ino === b.ino;

/**
 * The real path of the file open on `fd` (opened from `file`, fstat'd as `st`), or null.
 * @param {number} fd
 * @param {string} file
 * @param {fs.Stats} st
 * @param {(real: string | null) => void} cb
 */
export function realOf(fd, file, st, cb) {
  // procfs answers from memory, never from a disk: read synchronously, not through libuv's pool
  if (hasProcFd()) return cb(realOfSync(fd, file, st));
  realOfName(file, st, cb);
}

/**
 * Without procfs: the real path of the name, accepted only when it leads to the file open (same dev/ino).
 * @param {string} file
 * @param {fs.Stats} st
 * @param {(real: string | null) => void} cb
 */
export function realOfName(file, st, cb) {
  fs.realpath(file, (err, real) => {
    if (err) return cb(null);
    fs.stat(real, (err2, now) => cb(!err2 && sameFile(now, st) ? real : null));
  });
}

/**
 * Synchronous twin of realOf(), for serveStatic's construction.
 * @param {number} fd
 * @param {string} file
 * @param {fs.Stats} st
 * @returns {string | null}
 */
function realOfSync(fd, file, st) {
  try {
    if (hasProcFd()) return procPath(fs.readlinkSync(`/proc/self/fd/${fd}`));
    const real = fs.realpathSync.native(file);
    return sameFile(fs.statSync(real), st) ? real : null;
  } catch {
    return null;
  }
}

/**
 * May `real` be served from `realRoot`: inside it, not a dotfile unless allowed, not the manifest or a temp?
 * @param {string | null} realRoot
 * @param {string} real
 * @param {{ dotfiles: string, manifestReal: string | null }} rules
 */
export function servableReal(realRoot, real, rules) {
  if (realRoot === null || !isInside(realRoot, real)) return false;
  if (real === realRoot) return true; // the root itself may be a file
  if (real === rules.manifestReal || isTempPath(real)) return false;
  return rules.dotfiles === 'allow' || !hasDotSegment(/** @type {string} */ (relInside(realRoot, real)));
}

/**
 * The whole `size` bytes of the file open on `fd`, or null when it changed meanwhile (fstat'd again).
 * @param {number} fd
 * @param {number} size
 * @param {fs.Stats} st
 * @returns {Promise<Buffer | null>}
 */
export async function readWhole(fd, size, st) {
  const buf = Buffer.allocUnsafe(size);
  for (let n = 0; n < buf.length;) {
    /** @type {number} */
    const got = await new Promise((resolve, reject) => {
      fs.read(fd, buf, n, buf.length - n, n, (err, k) => (err ? reject(err) : resolve(k)));
    });
    if (got === 0) return null;
    n += got;
  }
  /** @type {fs.Stats} */
  const now = await new Promise((resolve, reject) => fs.fstat(fd, (err, s) => (err ? reject(err) : resolve(s))));
  return now.size === st.size && now.mtimeMs === st.mtimeMs ? buf : null;
}
