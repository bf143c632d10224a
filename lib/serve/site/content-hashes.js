import fs from 'node:fs';
import { createHasher } from '../../manifest/manifest.js';
import { OPEN_FLAGS } from '../bodies/index.js';

/**
 * The content hashes of listed files whose mtime moved but whose size did not (a deploy copy that
 * kept whole seconds: plain tar, zip, `cp -r`): hashed on the file's first request, never at
 * start-up, once per file and process, remembered by dev, ino, size and mtime. Two checks of one
 * file at once share one hash.
 */

/** Hashes remembered at most: past it, the oldest is forgotten (hashed again if asked again). */
const KEPT = 65536;
const CHUNK = 1 << 20;

export class ContentHashes {
  /** @type {Map<string, Promise<string | null>>} */
  known = new Map();
  /** files hashed (for diagnostics and tests) */
  hashed = 0;

  /**
   * The content hash of the file at `file`, which a check opened and fstat'd as `st`: read through
   * a descriptor that must be that file (dev/ino), unchanged from before the read to after it;
   * null when it is not (or cannot be read).
   * @param {string} file
   * @param {{ dev: number, ino: number, size: number, mtimeMs: number }} st
   * @returns {Promise<string | null>}
   */
  hashOf(file, st) {
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    const had = this.known.get(key);
    if (had !== undefined) return had;
    if (this.known.size >= KEPT) this.known.delete(/** @type {string} */ (this.known.keys().next().value));
    this.hashed++;
    const got = hashFile(file, st).catch(() => null).then((hash) => {
      if (hash === null && this.known.get(key) === got) this.known.delete(key); // asked again: tried again
      return hash;
    });
    this.known.set(key, got);
    return got;
  }
}

/**
 * @param {string} file
 * @param {{ dev: number, ino: number, size: number, mtimeMs: number }} st
 * @returns {Promise<string | null>}
 */
async function hashFile(file, st) {
  const fh = await fs.promises.open(file, OPEN_FLAGS);
  try {
    const same = (/** @type {fs.Stats} */ now) => now.dev === st.dev && now.ino === st.ino && now.size === st.size &&
      now.mtimeMs === st.mtimeMs;
    if (!same(await fh.stat())) return null;
    const h = createHasher();
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(st.size, 1)));
    for (let n = 0; n < st.size;) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, st.size - n), n);
      if (bytesRead === 0) return null; // shrank while read
      h.update(buf.subarray(0, bytesRead));
      n += bytesRead;
    }
    return same(await fh.stat()) ? h.digest() : null;
  } finally {
    await fh.close();
  }
}
