import { isAlwaysInternal } from '../../site-policy.js';
import { entryProblem, invalidManifest, validateSiteDictionary } from '../../manifest/manifest.js';
import { KeyTable } from './key-table.js';
import { scanManifest, EXCLUDED } from './line-scan.js';

/**
 * The manifest as the server keeps it: its lines and a hash table from each path to its line. A line
 * is parsed and validated when its path is first asked for; an invalid one is never served.
 */

/** @typedef {{ entry: import('../../manifest/manifest.js').FileEntry } | { problem: string }} Parsed */

/**
 * How a reload is cut up (runIndexAsync()): lines between two yields, and the wait at each.
 */
export const reloadSlices = {
  lines: 1 << 15,
  /** @type {() => Promise<unknown>} */
  pause: () => new Promise((resolve) => setImmediate(resolve)),
};

export class ManifestIndex {
  /**
   * @param {import('./line-scan.js').LineScan} lines scanned
   * @param {import('../../manifest/manifest.js').Manifest} head validated
   * @param {string} file for messages
   */
  constructor(lines, head, file) {
    this.lines = lines;
    this.bytes = lines.bytes;
    this.head = head;
    this.file = file;
    this.manifestRel = lines.manifestRel;
    /** every folder that holds a listed file, '' being the root */
    this.dirs = lines.dirs;
    this.settings = head.settings;
    this.siteDictionary = head.siteDictionary?.path ?? null;
    this.table = new KeyTable(lines.n);
  }

  /**
   * Add every line's path to the table, yielding between slices of `slice` lines.
   * @param {number} slice
   * @returns {Generator<void, void, void>}
   */
  *fill(slice) {
    const { lines, table } = this;
    for (let i = 0; i < lines.n; i++) {
      if (lines.keyLen[i] !== EXCLUDED) table.insert(i, lines.hashes[i], lines);
      if (i % slice === slice - 1) yield;
    }
  }

  /**
   * Index a manifest's bytes, yielding between batches of lines (runIndex(), runIndexAsync()).
   * @param {Buffer} bytes
   * @param {string} file
   * @param {string | null} manifestRel
   * @param {boolean} [checkAll] validate every entry now (a manifest not in writeManifest()'s text):
   *   throw the first problem
   * @returns {Generator<void, ManifestIndex, void>}
   */
  static *of(bytes, file, manifestRel, checkAll = false) {
    const slice = reloadSlices.lines;
    const { scan, head } = yield* scanManifest(bytes, file, manifestRel, slice);
    const index = new ManifestIndex(scan, head, file);
    yield* index.fill(slice);
    if (checkAll) yield* index.checkAll(slice);
    if (head.siteDictionary !== undefined) {
      const got = index.parsed(head.siteDictionary?.path);
      validateSiteDictionary(head, got !== null && 'entry' in got ? got.entry.hash : undefined, file);
    }
    return index;
  }

  /**
   * Validate every entry, yielding between slices of `slice` lines; throws the first problem.
   * @param {number} slice
   * @returns {Generator<void, void, void>}
   */
  *checkAll(slice) {
    const { lines } = this;
    for (let i = 0; i < lines.n; i++) {
      if (lines.keyLen[i] === EXCLUDED) continue;
      const got = this.parseLine(i, lines.keyAt(i));
      if ('problem' in got) throw invalidManifest(this.file, got.problem);
      if (i % slice === slice - 1) yield;
    }
  }

  /** Number of listed paths served. */
  get size() {
    return this.table.count;
  }

  /**
   * The line of `rel`, or -1 when it is not listed (or never served).
   * @param {string} rel
   */
  lineOf(rel) {
    if (isAlwaysInternal(rel, this.manifestRel)) return -1;
    return this.table.find(rel, this.lines);
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
    const { off } = this.lines;
    let end = off[i + 1] - 1;
    if (this.bytes[end - 1] === 0x2c) end--;
    let member;
    try {
      member = JSON.parse(`{${this.bytes.toString('utf8', off[i], end)}}`);
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
    await reloadSlices.pause();
    r = steps.next();
  }
  return r.value;
}
