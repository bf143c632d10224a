import fs from 'node:fs/promises';
import path from 'node:path';
import { manifestTextOf } from '../../manifest/manifest.js';
import { writeAtomic } from '../../fs-atomic.js';

/**
 * A manifest kept between watch mode's batches: the head, and each entry as its JSON text (one
 * string per file, not a tree of objects per file), parsed again only for the paths a batch looks
 * at. A batch replaces the entries of the paths it looked at and writes the whole document, in
 * order, atomically, only when it changed. `stamp` is the manifest file as this process last wrote or read it, so that
 * one written by someone else meanwhile is noticed (the caller then runs a whole pass).
 *
 * @typedef {import('../../manifest/manifest.js').Manifest} Manifest
 * @typedef {import('../../manifest/manifest.js').FileEntry} FileEntry
 * @typedef {Omit<Manifest, 'files'>} Head
 * @typedef {{ size: number, mtimeMs: number, ino: number }} Stamp
 */
export class ManifestRecords {
  /**
   * @param {Head} head
   * @param {Map<string, string>} lines path → JSON of its entry
   * @param {Stamp | null} stamp
   */
  constructor(head, lines, stamp) {
    this.head = head;
    this.lines = lines;
    this.stamp = stamp;
  }

  /**
   * A pass's manifest as records, stamped with the file at `file` (which that pass wrote, or left
   * as it was because nothing changed).
   * @param {Manifest} manifest
   * @param {string} file
   */
  static async of(manifest, file) {
    const { files, ...head } = manifest;
    const lines = new Map();
    for (const rel in files) if (Object.hasOwn(files, rel)) lines.set(rel, JSON.stringify(files[rel]));
    return ManifestRecords.stamped(head, lines, file);
  }

  /**
   * Records of a pass's manifest already as text, stamped with the file at `file`.
   * @param {Head} head
   * @param {Map<string, string>} lines
   * @param {string} file
   */
  static async stamped(head, lines, file) {
    return new ManifestRecords(head, lines, await stampOf(file));
  }

  /** @param {string} rel */
  has(rel) {
    return this.lines.has(rel);
  }

  /**
   * @param {string} rel
   * @returns {FileEntry | undefined}
   */
  entry(rel) {
    const line = this.lines.get(rel);
    return line === undefined ? undefined : JSON.parse(line);
  }

  /**
   * A manifest holding only the entries of `rels` (those listed): what a batch's decisions read.
   * @param {Iterable<string>} rels
   * @returns {Manifest}
   */
  subset(rels) {
    /** @type {Record<string, FileEntry>} */
    const files = {};
    for (const rel of rels) {
      const e = this.entry(rel);
      // own keys only, `__proto__` included (see entryOf())
      if (e === undefined) continue;
      Object.defineProperty(files, rel, { value: e, enumerable: true, writable: true, configurable: true });
    }
    return { ...this.head, files };
  }

  /**
   * Take a batch's result: it looked at `rels` and found `entries` (the new entries of those
   * paths; a path of `rels` without one is gone from the manifest); `head` is the new head.
   * Returns whether anything but the date changed.
   * @param {Iterable<string>} rels
   * @param {Map<string, FileEntry>} entries
   * @param {Head} head
   */
  apply(rels, entries, head) {
    const headText = (/** @type {Head} */ { generatedAt: _g, ...rest }) => JSON.stringify(rest);
    let changed = headText(this.head) !== headText(head);
    this.head = head;
    for (const rel of rels) {
      if (entries.has(rel)) continue;
      changed = this.lines.delete(rel) || changed;
    }
    for (const [rel, e] of entries) {
      const line = JSON.stringify(e);
      if (this.lines.get(rel) === line) continue;
      this.lines.set(rel, line);
      changed = true;
    }
    return changed;
  }

  /**
   * Write the manifest atomically (entries sorted by path, as buildManifest() orders them), and
   * take its stamp.
   * @param {string} file
   */
  async write(file) {
    const rels = [...this.lines.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const lines = this.lines;
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeAtomic(file, manifestTextOf(this.head, (function* entries() {
      for (const rel of rels) yield /** @type {[string, string]} */ ([rel, /** @type {string} */ (lines.get(rel))]);
    })()));
    this.stamp = await stampOf(file);
  }

  /**
   * Is the manifest file still the one this process last wrote or read?
   * @param {string} file
   */
  async current(file) {
    return this.stamp !== null && sameStamp(await stampOf(file), this.stamp);
  }
}

/**
 * @param {string} file
 * @returns {Promise<Stamp | null>}
 */
async function stampOf(file) {
  const st = await fs.stat(file).catch(() => null);
  return st === null ? null : { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
}

/**
 * @param {Stamp | null} a
 * @param {Stamp | null} b
 */
const sameStamp = (a, b) => a !== null && b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
