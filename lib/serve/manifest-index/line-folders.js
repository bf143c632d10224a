import { pathProblem } from '../../manifest/manifest.js';

/**
 * The folders of the paths LineScan reads ('' the root). Lines come sorted, so a line's folder is
 * most often the previous line's: compared as bytes first, it makes no string.
 */
export class LineFolders {
  /** every folder that holds a listed file, '' being the root */
  dirs = new Set(['']);
  /** the folder of the last line that had one: where it starts, its length, its hash (-1: none) */
  lastDir = -1;
  lastDirLen = -1;
  lastDirHash = 0;

  /** @param {Buffer} bytes the manifest's */
  constructor(bytes) {
    this.bytes = bytes;
  }

  /**
   * Record the folders of the path at `start` (`slash`: its last `/`, -1 none), unless the previous line had the same.
   * @param {number} start the path's first byte
   * @param {string | null} key the path when already decoded
   * @param {number} slash
   * @param {number} dirHash the hash of the path's bytes before `slash` (a cheap first test)
   */
  add(start, key, slash, dirHash) {
    if (key !== null) {
      this.lastDir = -1;
      if (key.includes('/')) this.addFolder(key.slice(0, key.lastIndexOf('/')));
      return;
    }
    if (slash === -1) return;
    const len = slash - start;
    const last = this.lastDir;
    if (last !== -1 && len === this.lastDirLen && dirHash === this.lastDirHash && this.same(last, start, len)) return;
    this.lastDir = start;
    this.lastDirLen = len;
    this.lastDirHash = dirHash;
    this.addFolder(this.bytes.toString('utf8', start, slash));
  }

  /**
   * Are the `len` bytes at `a` and at `b` the same (a folder name is short: no native call)?
   * @param {number} a
   * @param {number} b
   * @param {number} len
   */
  same(a, b, len) {
    for (let k = 0; k < len; k++) if (this.bytes[a + k] !== this.bytes[b + k]) return false;
    return true;
  }

  /**
   * Record `dir` and its parents (a folder already known has its parents known too).
   * @param {string} dir
   */
  addFolder(dir) {
    // lines are not validated yet: a folder no valid path has (`..`, absolute…) is not watched or redirected to
    if (pathProblem(dir) !== null) return;
    for (let s = dir.length; s !== -1 && !this.dirs.has(dir.slice(0, s)); s = dir.lastIndexOf('/', s - 1)) {
      this.dirs.add(dir.slice(0, s));
    }
  }
}
