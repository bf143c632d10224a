import fs from 'node:fs';

/**
 * A file range as an async iterable, for adapters that send bodies as streams (fetch, Fastify):
 * as streamFd() in the node adapter, the last chunk waits for a second fstat with the same size and
 * mtime, and a file that shrank or changed while it was read throws instead of ending the body.
 */

/** Bytes per read, as the node adapter reads them. */
const CHUNK = 512 * 1024;

/**
 * Bytes [start, end] of an open descriptor, which is closed when the iteration ends, fails or is
 * returned early (after any read in flight: an async generator's return waits for it).
 * @param {import('../http/index.js').FileRange} range
 * @returns {AsyncGenerator<Buffer, void, undefined>}
 */
export async function* fileChunks({ fd, start, end, stat }) {
  try {
    for (let pos = start; pos <= end;) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, end + 1 - pos));
      /** @type {number} */
      const n = await new Promise((resolve, reject) => {
        fs.read(fd, buf, 0, buf.length, pos, (err, k) => (err ? reject(err) : resolve(k)));
      });
      if (n === 0) throw new Error('The file shrank while it was sent');
      pos += n;
      if (pos > end && stat !== undefined && !(await unchanged(fd, stat))) {
        throw new Error('The file changed while it was sent');
      }
      yield n === buf.length ? buf : buf.subarray(0, n);
    }
  } finally {
    fs.close(fd, () => {});
  }
}

/**
 * Whether the file open on `fd` still has the size and mtime of `stat` (not ctime: a rename,
 * which cannot mix versions, changes the old inode's ctime).
 * @param {number} fd
 * @param {import('node:fs').Stats} stat
 * @returns {Promise<boolean>}
 */
function unchanged(fd, stat) {
  return new Promise((resolve) => {
    fs.fstat(fd, (err, now) => resolve(!err && now.size === stat.size && now.mtimeMs === stat.mtimeMs));
  });
}
