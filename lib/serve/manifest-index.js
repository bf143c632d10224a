import { isTempPath } from '../fs-atomic.js';
import { entryProblem, manifestText, parseManifest, validateHead, validateSiteDictionary } from '../manifest.js';
import { KeyTable, keyHash, FNV_SEED } from './key-table.js';

/**
 * The manifest as the server keeps it: its bytes as writeManifest() wrote them (one line per
 * file), the offset of each line and a hash table of the lines' paths. Start-up parses the head
 * and hashes each line's path, nothing else; a line is parsed and validated when its path is
 * first asked for, and an invalid one is never served. A manifest in another layout (an older
 * version's, another writer's) is parsed and validated whole, then kept in this layout.
 */

const FILES_LINE = Buffer.from('\n "files": {\n');
const TAIL = Buffer.from('\n }\n}');
const QUOTE = 0x22;
const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
/** JSON's white space, after the last `}` */
const SPACE = [0x20, 0x09, 0x0a, 0x0d];
/** Lines indexed between two yields of an index built in the background (a reload). */
const BATCH = 1 << 16;

/** @typedef {{ entry: import('../manifest.js').FileEntry } | { problem: string }} Parsed */

export class ManifestIndex {
  /** every folder that holds a listed file, '' being the root */
  dirs = new Set(['']);
  /** lines indexed */
  n = 0;
  /** start of each line, then the end of the last one (+1) */
  off = new Float64Array(1024);
  /** each line's path: its length in bytes, or -1 when escaped in the JSON (then parsed) */
  keyLen = new Int32Array(1024);
  hashes = new Int32Array(1024);
  table = new KeyTable(0);
  /** paths not served: the manifest itself and our temp files */
  excluded = 0;
  /** the folder of the last line that had one, as a byte range */
  /** @type {[number, number] | null} */
  lastDir = null;
  /** where `.pctmp` occurs among the lines (few or none), and the next one to pass */
  /** @type {number[]} */
  temps = [];
  nextTemp = 0;

  /**
   * @param {Buffer} bytes the manifest in one line per file
   * @param {import('../manifest.js').Manifest} head validated
   * @param {string} file for messages
   * @param {string | null} manifestRel the manifest's own path (never served)
   */
  constructor(bytes, head, file, manifestRel) {
    this.bytes = bytes;
    this.head = head;
    this.file = file;
    this.manifestRel = manifestRel;
    this.manifestLen = manifestRel === null ? -1 : Buffer.byteLength(manifestRel);
    this.settings = head.settings;
    this.siteDictionary = head.siteDictionary?.path ?? null;
  }

  /**
   * Index a manifest's bytes, as a generator that yields between batches of lines (run it with
   * runIndex() or runIndexAsync()). Throws the manifest's error when it is invalid.
   * @param {Buffer} bytes
   * @param {string} file
   * @param {string | null} manifestRel
   * @param {boolean} [relaidOnce] the bytes are our own rewrite of another layout
   * @returns {Generator<void, ManifestIndex, void>}
   */
  static *of(bytes, file, manifestRel, relaidOnce = false) {
    const layout = linesOf(bytes, file);
    const again = () => {
      if (relaidOnce) throw new Error(`precompressor: could not index ${file} in its own layout`);
      return ManifestIndex.of(relaid(bytes, file), file, manifestRel, true);
    };
    if (layout === null) return yield* again();
    const index = new ManifestIndex(bytes, layout.head, file, manifestRel);
    for (let t = bytes.indexOf('.pctmp', layout.start); t !== -1 && t < layout.end; t = bytes.indexOf('.pctmp', t + 1)) index.temps.push(t);
    for (let p = layout.start; p < layout.end;) {
      p = index.line(p, layout.end);
      if (p === -1) return yield* again();
      if (index.n % BATCH === 0) yield;
    }
    index.off[index.n] = layout.end + 1;
    index.table = new KeyTable(index.n);
    for (let i = 0; i < index.n; i++) if (index.keyLen[i] !== -2) index.table.insert(i, index.hashes[i], index);
    const sd = index.head.siteDictionary;
    if (sd !== undefined) {
      const got = index.parsed(sd?.path);
      validateSiteDictionary(index.head, got !== null && 'entry' in got ? got.entry.hash : undefined, file);
    }
    return index;
  }

  /**
   * Index the line that starts at `p`; the start of the next line, or -1 when the text is not
   * in the layout.
   * @param {number} p
   * @param {number} end where the last line ends
   */
  line(p, end) {
    const b = this.bytes;
    if (b[p] !== 0x20 || b[p + 1] !== 0x20 || b[p + 2] !== QUOTE) return -1;
    let h = FNV_SEED;
    let q = p + 3;
    let slash = -1;
    for (let c = b[q]; c !== QUOTE && c !== BACKSLASH && c !== NEWLINE && q < end; c = b[++q]) {
      h = Math.imul(h ^ c, 0x01000193);
      if (c === SLASH) slash = q;
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
    if (key !== null && (key === this.manifestRel || isTempPath(key))) {
      this.keyLen[i] = -2;
      this.excluded++;
    } else {
      this.addDirs(i, key, slash);
    }
    return nl + 1;
  }

  /**
   * Could the plain path of `len` bytes at `at` be one we never serve (the manifest, a temp)?
   * A cheap test first: most paths are neither.
   * @param {number} len
   * @param {number} at
   */
  isOurs(len, at) {
    while (this.nextTemp < this.temps.length && this.temps[this.nextTemp] < at) this.nextTemp++;
    return len === this.manifestLen || (this.nextTemp < this.temps.length && this.temps[this.nextTemp] < at + len);
  }

  /**
   * Record the folders of line `i`'s path (`slash`: its last `/`, -1 none), unless the previous line had the same.
   * @param {number} i
   * @param {string | null} key the path when already decoded
   * @param {number} slash
   */
  addDirs(i, key, slash) {
    if (key !== null) {
      this.lastDir = null;
      if (key.includes('/')) this.addFolder(key.slice(0, key.lastIndexOf('/')));
      return;
    }
    if (slash === -1) return;
    const start = this.off[i] + 3;
    const [from, to] = this.lastDir ?? [0, -1];
    if (to - from === slash - start && this.bytes.compare(this.bytes, from, to, start, slash) === 0) return;
    this.lastDir = [start, slash];
    this.addFolder(this.bytes.toString('utf8', start, slash));
  }

  /**
   * Record `dir` and its parents (a folder already known has its parents known too).
   * @param {string} dir
   */
  addFolder(dir) {
    for (let s = dir.length; s !== -1 && !this.dirs.has(dir.slice(0, s)); s = dir.lastIndexOf('/', s - 1)) this.dirs.add(dir.slice(0, s));
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

  /** Number of listed paths served. */
  get size() {
    return this.table.count;
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

  /**
   * The line of `rel`, or -1 when it is not listed (or never served).
   * @param {string} rel
   */
  lineOf(rel) {
    if (rel === this.manifestRel || isTempPath(rel)) return -1;
    return this.table.find(rel, this);
  }

  /** @param {string} rel */
  has(rel) {
    return this.lineOf(rel) !== -1;
  }

  /**
   * `rel`'s entry parsed and validated, its problem, or null when it is not listed.
   * @param {string} rel
   * @returns {Parsed | null}
   */
  parsed(rel) {
    const i = this.lineOf(rel);
    return i === -1 ? null : this.parseLine(i, rel);
  }

  /**
   * `rel`'s valid entry, or undefined (not listed, or invalid).
   * @param {string} rel
   */
  entry(rel) {
    const got = this.parsed(rel);
    return got !== null && 'entry' in got ? got.entry : undefined;
  }

  /**
   * @param {number} i
   * @param {string} rel its path
   * @returns {Parsed}
   */
  parseLine(i, rel) {
    let end = this.off[i + 1] - 1;
    if (this.bytes[end - 1] === 0x2c) end--;
    let member;
    try {
      member = JSON.parse(`{${this.bytes.toString('utf8', this.off[i], end)}}`);
    } catch {
      return { problem: `entry ${JSON.stringify(rel)} is not valid JSON` };
    }
    const keys = Object.keys(member);
    if (keys.length !== 1 || keys[0] !== rel) return { problem: `the line of ${JSON.stringify(rel)} is not one entry` };
    const why = entryProblem(rel, member[rel], this.head.schema);
    return why === null ? { entry: member[rel] } : { problem: why };
  }
}

/**
 * Where the lines of a manifest in one line per file are, and its head validated; null when the
 * bytes are not in that layout. Throws when the head is invalid.
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
 * A manifest in another layout: parsed and validated whole (throws as readManifest() does), then
 * written in one line per file.
 * @param {Buffer} bytes
 * @param {string} file
 */
function relaid(bytes, file) {
  const m = parseManifest(bytes.toString('utf8'), file);
  const text = Buffer.concat([...manifestText(m)].map((t) => Buffer.from(t)));
  // without files, manifestText() writes `"files": {}` on one line: index an empty list
  return text.includes(FILES_LINE) ? text : Buffer.concat([text.subarray(0, text.lastIndexOf('{}')), Buffer.from('{\n }\n}\n')]);
}

/**
 * The path of the line at `p` (its opening quote) when escaped in JSON, or null when it does not parse.
 * @param {Buffer} b
 * @param {number} p
 * @param {number} nl the line's end
 * @returns {string | null}
 */
function escapedKey(b, p, nl) {
  let q = p + 1;
  while (q < nl && b[q] !== QUOTE) q += b[q] === BACKSLASH ? 2 : 1;
  try {
    const key = JSON.parse(b.toString('utf8', p, q + 1));
    return typeof key === 'string' && b[q + 1] === 0x3a ? key : null;
  } catch {
    return null;
  }
}

/**
 * Build an index synchronously (serveStatic's construction).
 * @param {Generator<void, ManifestIndex, void>} steps
 */
export function runIndex(steps) {
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/**
 * Build an index letting requests in between batches (a reload, while the old index serves).
 * @param {Generator<void, ManifestIndex, void>} steps
 */
export async function runIndexAsync(steps) {
  let r = steps.next();
  while (!r.done) {
    await new Promise((resolve) => setImmediate(resolve));
    r = steps.next();
  }
  return r.value;
}
