import { isTempPath } from '../fs-atomic.js';
import { ENCODINGS as ALL } from '../encodings.js';

/**
 * The manifest as the server keeps it: per servable path a few numbers in typed arrays and the
 * content hash as 32 bytes, instead of the parsed entry objects (several hundred bytes each).
 * Pure: entries in, entries out. An entry is rebuilt as a manifest FileEntry when a path is
 * first asked for (lib/serve/site.js); entries with rarer fields (`type`, `dictionary`,
 * `deltas`, an unusual hash) are kept whole.
 */

const ENCODINGS = ALL.map((e) => e.name);
const STRIDE = 2 + ENCODINGS.length; // size, mtimeMs, then each encoding's variant size (-1: none)
// 43 base64url characters whose last one carries no stray bits: the one spelling of 32 bytes
const HASH = /^sha256-([A-Za-z0-9_-]{42}[AEIMQUYcgkosw048])$/;

export class SiteIndex {
  /** @type {Map<string, number>} path → slot */
  slots = new Map();
  /** every folder that holds a listed file, '' being the root */
  dirs = new Set(['']);
  /** @type {Map<number, import('../manifest.js').FileEntry>} entries kept whole */
  whole = new Map();
  nums = new Float64Array(STRIDE * 1024);
  hashes = Buffer.alloc(32 * 1024);

  /**
   * @param {string | null} manifestRel the manifest's own path (never served)
   * @param {import('../manifest.js').Manifest | null} manifest
   */
  constructor(manifestRel, manifest) {
    this.manifestRel = manifestRel;
    this.settings = manifest?.settings;
    this.siteDictionary = manifest?.siteDictionary?.path ?? null;
    const files = manifest?.files ?? {};
    for (const rel in files) if (Object.hasOwn(files, rel)) this.add(rel, files[rel]);
  }

  /**
   * A reader's collector (readManifest()) that keeps the manifest as an index.
   * @param {string | null} manifestRel
   * @returns {import('../manifest.js').Collector<SiteIndex>}
   */
  static collector(manifestRel) {
    return (head) => {
      const index = new SiteIndex(manifestRel, head);
      return { add: (rel, e) => index.add(rel, e), done: () => index };
    };
  }

  get size() {
    return this.slots.size;
  }

  /**
   * Record one manifest entry (the manifest itself and our temp files are left out: never served).
   * @param {string} rel
   * @param {import('../manifest.js').FileEntry} e
   */
  add(rel, e) {
    if (rel === this.manifestRel || isTempPath(rel)) return;
    const i = this.slots.size;
    this.grow(i + 1);
    this.slots.set(rel, i);
    const at = i * STRIDE;
    this.nums[at] = e.size;
    this.nums[at + 1] = e.mtimeMs;
    for (let k = 0; k < ENCODINGS.length; k++) {
      const v = e.variants[ENCODINGS[k]];
      this.nums[at + 2 + k] = v !== undefined && Object.hasOwn(e.variants, ENCODINGS[k]) ? v.size : -1;
    }
    const m = HASH.exec(e.hash);
    const packed = m !== null && this.hashes.write(m[1], i * 32, 'base64url') === 32;
    if (!packed || e.type !== undefined || e.dictionary !== undefined || e.deltas !== undefined) this.whole.set(i, e);
    // a folder already known has its parents known too
    for (let s = rel.lastIndexOf('/'); s !== -1; s = rel.lastIndexOf('/', s - 1)) {
      const dir = rel.slice(0, s);
      if (this.dirs.has(dir)) break;
      this.dirs.add(dir);
    }
  }

  /** @param {number} n slots needed */
  grow(n) {
    if (n * STRIDE <= this.nums.length) return;
    const nums = new Float64Array(this.nums.length * 2);
    nums.set(this.nums);
    this.nums = nums;
    const hashes = Buffer.alloc(this.hashes.length * 2);
    this.hashes.copy(hashes);
    this.hashes = hashes;
  }

  /** @param {string} rel */
  has(rel) {
    return this.slots.has(rel);
  }

  /**
   * The manifest entry of `rel`, rebuilt, or undefined when it is not listed.
   * @param {string} rel
   * @returns {import('../manifest.js').FileEntry | undefined}
   */
  entry(rel) {
    const i = this.slots.get(rel);
    if (i === undefined) return undefined;
    const kept = this.whole.get(i);
    if (kept !== undefined) return kept;
    const at = i * STRIDE;
    /** @type {import('../manifest.js').FileEntry['variants']} */
    const variants = {};
    ENCODINGS.forEach((enc, k) => {
      const size = this.nums[at + 2 + k];
      if (size >= 0) variants[enc] = { size };
    });
    const hash = `sha256-${this.hashes.toString('base64url', i * 32, i * 32 + 32)}`;
    return { size: this.nums[at], mtimeMs: this.nums[at + 1], hash, variants };
  }

  /**
   * Every listed path of the folder `dir` ('' for the root), for a watcher event that did not name its file.
   * @param {string} dir
   */
  *inFolder(dir) {
    const prefix = dir === '' ? '' : `${dir}/`;
    for (const rel of this.slots.keys()) if (rel.startsWith(prefix) && !rel.slice(prefix.length).includes('/')) yield rel;
  }
}
