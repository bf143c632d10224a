import { isAlwaysInternal } from '../../site-policy.js';
import { manifestText, parseManifest, validateHead } from '../../manifest/manifest.js';
import { keyHash, hashByte, FNV_SEED } from './key-table.js';
import { LineFolders } from './line-folders.js';

/**
 * The lines of a manifest as writeManifest() writes them, read without parsing: where each starts, its
 * path's hash and length, the folders. Another layout is parsed whole and written in this one.
 */

const FILES_LINE = Buffer.from('\n "files": {\n');
const TAIL = Buffer.from('\n }\n}');
const QUOTE = 0x22;
const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
/** JSON's white space, after the last `}` */
const SPACE = [0x20, 0x09, 0x0a, 0x0d];
/** Bytes searched for temp paths between two yields (a native search, a few ms per slice). */
const TEMP_SLICE = 1 << 23;
/** keyLen of a line never served (the manifest itself, our temp files) */
export const EXCLUDED = -2;

/**
 * Scan a manifest's bytes, yielding between slices so that a reload lets requests in.
 * @param {Buffer} bytes
 * @param {string} file for messages
 * @param {string | null} manifestRel the manifest's own path (never served)
 * @param {number} slice lines between two yields
 * @returns {Generator<void, { scan: LineScan, head: import('../../manifest/manifest.js').Manifest }, void>}
 */
export function* scanManifest(bytes, file, manifestRel, slice) {
  for (let attempt = 0; attempt < 2; attempt++) {
    const layout = linesOf(bytes, file);
    const scan = layout === null ? null : new LineScan(bytes, manifestRel, layout.end);
    if (scan !== null) yield* scan.findTemps(layout?.start ?? 0);
    for (let p = layout?.start ?? 0; scan !== null && p !== -1 && p < scan.end;) {
      p = scan.line(p);
      if (p === -1) scan.failed = true;
      else if (scan.n % slice === 0) yield;
    }
    if (layout !== null && scan !== null && !scan.failed) return { scan: scan.done(), head: layout.head };
    bytes = relaid(bytes, file);
  }
  throw new Error(`precompressor: could not index ${file} in its own layout`);
}

export class LineScan {
  /** lines read */
  n = 0;
  /** start of each line, then the end of the last one (+1) */
  off = new Float64Array(1024);
  /** each line's path: its length in bytes, -1 when escaped in the JSON (then parsed), or EXCLUDED */
  keyLen = new Int32Array(1024);
  hashes = new Int32Array(1024);
  failed = false;
  /** @type {number[]} where `.pctmp` occurs among the lines (few or none) */
  temps = [];
  nextTemp = 0;

  /**
   * @param {Buffer} bytes
   * @param {string | null} manifestRel
   * @param {number} end where the last line ends (its newline)
   */
  constructor(bytes, manifestRel, end) {
    this.bytes = bytes;
    this.manifestRel = manifestRel;
    this.manifestLen = manifestRel === null ? -1 : Buffer.byteLength(manifestRel);
    this.end = end;
    this.folders = new LineFolders(bytes);
    /** every folder that holds a listed file, '' being the root */
    this.dirs = this.folders.dirs;
  }

  /**
   * Find where `.pctmp` occurs among the lines, from `start`, yielding between slices of the bytes.
   * @param {number} start
   * @returns {Generator<void, void, void>}
   */
  *findTemps(start) {
    const { bytes, end } = this;
    for (let from = start; from < end; from += TEMP_SLICE) {
      // a match may start in this slice and end in the next one
      const stop = Math.min(from + TEMP_SLICE, end);
      const window = bytes.subarray(0, Math.min(stop + 5, end));
      for (let t = window.indexOf('.pctmp', from); t !== -1 && t < stop; t = window.indexOf('.pctmp', t + 1)) {
        this.temps.push(t);
      }
      if (stop < end) yield;
    }
  }

  /** All lines read: close the offsets. */
  done() {
    this.off[this.n] = this.end + 1;
    return this;
  }

  /**
   * Index the line that starts at `p`; the start of the next line, or -1 when not in the layout.
   * @param {number} p
   */
  line(p) {
    const { bytes: b, end } = this;
    if (b[p] !== 0x20 || b[p + 1] !== 0x20 || b[p + 2] !== QUOTE) return -1;
    let h = FNV_SEED;
    let q = p + 3;
    let slash = -1;
    let dirHash = 0;
    for (let c = b[q]; c !== QUOTE && c !== BACKSLASH && c !== NEWLINE && q < end; c = b[++q]) {
      h = hashByte(h, c);
      if (c === SLASH) {
        slash = q;
        dirHash = h;
      }
    }
    const nl = b.indexOf(NEWLINE, q);
    if (nl === -1 || nl > end || b[nl - (nl === end ? 1 : 2)] !== 0x7d || (nl !== end && b[nl - 1] !== 0x2c)) return -1;
    let len = q - p - 3;
    /** @type {string | null} */
    let key = null;
    if (b[q] === BACKSLASH) {
      key = escapedKey(b, p + 2, nl);
      if (key === null) return -1;
      h = keyHash(Buffer.from(key));
      len = -1;
    } else if (b[q + 1] !== 0x3a) {
      return -1;
    }
    const i = this.n++;
    this.grow(i + 2);
    this.off[i] = p;
    this.hashes[i] = h;
    this.keyLen[i] = len;
    if (key === null && this.isOurs(len, p + 3)) key = this.keyAt(i);
    if (key !== null && isAlwaysInternal(key, this.manifestRel)) {
      this.keyLen[i] = EXCLUDED;
    } else {
      this.folders.add(p + 3, key, slash, dirHash);
    }
    return nl + 1;
  }

  /**
   * Could the plain path of `len` bytes at `at` be one we never serve (the manifest, a temp)?
   * @param {number} len
   * @param {number} at
   */
  isOurs(len, at) {
    while (this.nextTemp < this.temps.length && this.temps[this.nextTemp] < at) this.nextTemp++;
    return len === this.manifestLen || (this.nextTemp < this.temps.length && this.temps[this.nextTemp] < at + len);
  }

  /** @param {number} n lines needed */
  grow(n) {
    if (n <= this.off.length) return;
    const off = new Float64Array(this.off.length * 2);
    off.set(this.off);
    this.off = off;
    const keyLen = new Int32Array(off.length);
    keyLen.set(this.keyLen);
    this.keyLen = keyLen;
    const hashes = new Int32Array(off.length);
    hashes.set(this.hashes);
    this.hashes = hashes;
  }

  /**
   * Line `i`'s path.
   * @param {number} i
   */
  keyAt(i) {
    const start = this.off[i] + 2;
    const len = this.keyLen[i];
    if (len >= 0) return this.bytes.toString('utf8', start + 1, start + 1 + len);
    return /** @type {string} */ (escapedKey(this.bytes, start, this.off[i + 1] - 1));
  }
}

/**
 * Where the lines of a manifest are, its head validated; null when not in that layout.
 * @param {Buffer} bytes
 * @param {string} file
 */
function linesOf(bytes, file) {
  const at = bytes.indexOf(FILES_LINE);
  if (at === -1) return null;
  let last = bytes.length;
  while (last > 0 && SPACE.includes(bytes[last - 1])) last--;
  const tail = last - TAIL.length;
  if (tail < at + FILES_LINE.length - 1 || !bytes.subarray(tail, last).equals(TAIL)) return null;
  let head;
  try {
    head = JSON.parse(`${bytes.toString('utf8', 0, at)}\n"files": {}}`);
  } catch {
    return null;
  }
  return { head: validateHead(head, file), start: at + FILES_LINE.length, end: tail };
}

/**
 * A manifest in another layout, parsed and validated whole, written in one line per file.
 * @param {Buffer} bytes
 * @param {string} file
 */
function relaid(bytes, file) {
  const m = parseManifest(bytes.toString('utf8'), file);
  const text = Buffer.concat([...manifestText(m)].map((t) => Buffer.from(t)));
  // without files, manifestText() writes `"files": {}` on one line: index an empty list
  if (text.includes(FILES_LINE)) return text;
  return Buffer.concat([text.subarray(0, text.lastIndexOf('{}')), Buffer.from('{\n }\n}\n')]);
}

/**
 * The path of the line at `p` (its opening quote) when escaped in JSON, or null when it does not parse.
 * @param {Buffer} b
 * @param {number} p
 * @param {number} nl the line's end
 * @returns {string | null}
 */
export function escapedKey(b, p, nl) {
  let q = p + 1;
  while (q < nl && b[q] !== QUOTE) q += b[q] === BACKSLASH ? 2 : 1;
  try {
    const key = JSON.parse(b.toString('utf8', p, q + 1));
    return typeof key === 'string' && b[q + 1] === 0x3a ? key : null;
  } catch {
    return null;
  }
}

