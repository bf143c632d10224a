import fs from 'node:fs';
import { writeAtomicWith } from '../../fs-atomic.js';
import { MANIFEST_INDEX_SUFFIX } from '../../options.js';
import { deltaStem, deltasOf, sha256 } from '../../manifest/manifest.js';
import { suffixEncoding, suffixOf, stemOf } from '../../encodings.js';
import { writtenAt, MTIME_SLACK_MS } from '../plan/index.js';
import { deltasTouch, isPage } from '../dictionaries/index.js';
import { bytesOf } from './report.js';

/**
 * The warm index (#31): what a re-run on an unchanged folder needs of the manifest, beside it
 * (`<manifest>.pcindex`), so that such a run reads neither the manifest nor a file's content
 * (lib/compress/pass/warm-run.js). Not part of the manifest's schema but a cache of it, valid only for
 * the very manifest file it was made from (device, inode, size, mtime, ctime) and the options it
 * was made under (a digest: none of their values, such as a remote cache's credentials); any pass
 * that finds it stale writes it again; deleting it costs one slower run.
 *
 * The text: a header line (JSON); a line of the entries the delta and site-dictionary steps use
 * ([path, entry] pairs, JSON); then lines `<folder as JSON>\t<its files as JSON>`, a file as
 * [name, size, mtimeMs, variant sizes (-1: none) in the header's `encodings` order, deltas
 * ([name, size] pairs) or 0]. A folder may have several lines (the manifest's order interleaves
 * a folder's files with its sub-folders').
 */

export const INDEX_FORMAT = 1;

/** @param {string} manifest */
export const indexPathOf = (manifest) => `${manifest}${MANIFEST_INDEX_SUFFIX}`;

/**
 * @typedef {{ dev: number, ino: number, size: number, mtimeMs: number, ctimeMs: number }} Identity
 * @typedef {import('../../manifest/manifest.js').Manifest} Manifest
 * @typedef {import('../../manifest/manifest.js').FileEntry} FileEntry
 * @typedef {import('../../options.js').Options} Options
 * @typedef {{ format: number, manifest: Identity, key: string, head: Omit<Manifest, 'files'>,
 *   encodings: string[], files: number, counts: Record<string, number>, bytes: Record<string, number>,
 *   whole: boolean }} Header  whole: its last line is there (read, not written)
 */

/**
 * The manifest file's identity now, or null when it cannot be stat'ed.
 * @param {string} file
 * @returns {Identity | null}
 */
export function identityOf(file) {
  let st;
  try {
    st = fs.statSync(file);
  } catch {
    return null; // whatever it is (gone, a file on the way, no access): the manifest's own read reports it
  }
  if (!st.isFile()) return null;
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

/** @param {Identity | null} a @param {Identity | null} b */
export const sameIdentity = (a, b) => a !== null && b !== null &&
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

/**
 * Options that change nothing a pass decides or writes on an unchanged folder; the remote cache's
 * (its URL and headers may hold credentials) only says where variants come from, and a run with
 * one does not use the index.
 */
const NEUTRAL = new Set(['concurrency', 'onProgress', 'streamThreshold', 'cache', 'cacheDir', 'cacheMaxSize',
  'allowSystemDir', 'serverConfig', 'force', 'dryRun', 'cacheUrl', 'cacheUrlReadOnly', 'cacheHeaders']);

/**
 * The options an index holds for, as a digest; null when one cannot be told apart by its text (a
 * function: the API's hashPattern), then no index is used. Every option but NEUTRAL counts, so that
 * an option added later invalidates the index rather than being ignored by it.
 * @param {Options} opts
 * @returns {string | null}
 */
export function optionsKey(opts) {
  /** @type {Record<string, unknown>} */
  const kept = {};
  for (const [k, v] of Object.entries(opts)) {
    if (NEUTRAL.has(k)) continue;
    if (typeof v === 'function') return null;
    kept[k] = v instanceof Set ? [...v].sort() : v instanceof RegExp ? String(v) : v;
  }
  return sha256(JSON.stringify(kept), 'base64url'); // their digest: the index says nothing of them
}

/**
 * Can a manifest be indexed: does no listed file sit at another listed file's variant or delta
 * path (a file of the user's there: each pass warns about it, so none is a warm run)?
 * @param {Record<string, FileEntry>} files
 */
function indexable(files) {
  for (const rel in files) {
    const enc = suffixEncoding(rel);
    if (enc !== undefined && Object.hasOwn(files, stemOf(rel, enc))) return false;
    const stem = rel.endsWith('.dcz') || rel.endsWith('.dcb') ? deltaStem(rel) : null;
    if (stem !== null && Object.hasOwn(files, stem)) return false;
  }
  return true;
}

/**
 * The file counts a warm run reports for these entries: the fresh ones unchanged, the others
 * skipped for the reason they were.
 * @param {Record<string, FileEntry>} files
 */
function countsOf(files) {
  /** @type {Record<string, number>} */
  const counts = { unchanged: 0, excluded: 0, compressedFormat: 0, empty: 0 };
  const KEY = { excluded: 'excluded', 'compressed-format': 'compressedFormat', empty: 'empty' };
  let n = 0;
  for (const rel in files) {
    n++;
    const s = files[rel].skipped;
    if (s === undefined || s === 'not-smaller') counts.unchanged++;
    else counts[KEY[s]]++;
  }
  return { counts, n };
}

/**
 * The index's text, in pieces.
 * @param {Options} opts
 * @param {Manifest} manifest
 * @param {Identity} identity
 * @param {string} key
 * @returns {Generator<string>}
 */
function* indexText(opts, manifest, identity, key) {
  const { files, ...head } = manifest;
  /** @type {Set<string>} */
  const encs = new Set();
  for (const rel in files) for (const enc in files[rel].variants) encs.add(enc);
  const encodings = [...encs].sort();
  const { counts, n } = countsOf(files);
  const entries = (function* values() {
    for (const rel in files) yield files[rel];
  })();
  /** @type {Omit<Header, 'whole'>} */
  const header = {
    format: INDEX_FORMAT, manifest: identity, key, head, encodings, files: n, counts,
    bytes: bytesOf(entries, opts.encodings),
  };
  yield `${JSON.stringify(header)}\n`;
  const dictPath = head.siteDictionary?.path;
  const used = [];
  for (const rel in files) {
    const e = files[rel];
    if (rel === dictPath || isPage(rel, e, opts) || deltasTouch(rel, e, opts)) used.push([rel, e]);
  }
  yield `${JSON.stringify(used)}\n`;
  let dir = null;
  let line = '';
  for (const rel in files) {
    const slash = rel.lastIndexOf('/');
    const d = slash === -1 ? '' : rel.slice(0, slash);
    if (d !== dir) {
      if (dir !== null) yield `${line}]\n`;
      dir = d;
      line = `${JSON.stringify(d)}\t[`;
    } else line += ',';
    line += JSON.stringify(fileTuple(rel, slash, files[rel], encodings));
    if (line.length > 1 << 20) {
      yield line;
      line = '';
    }
  }
  if (dir !== null) yield `${line}]\n`;
  yield END;
}

/** The index's last line: one cut short (a crash before its data reached the disk) lacks it. */
const END = 'end\n';

/**
 * @param {string} rel
 * @param {number} slash
 * @param {FileEntry} e
 * @param {string[]} encodings
 */
function fileTuple(rel, slash, e, encodings) {
  const sizes = encodings.map((enc) => /** @type {any} */ (e.variants)[enc]?.size ?? -1);
  const deltas = deltasOf(rel, e).map(([dict, enc, p]) =>
    [p.slice(slash + 1), /** @type {any} */ (e.deltas)[dict][enc].size]);
  return [rel.slice(slash + 1), e.size, e.mtimeMs, sizes, deltas.length > 0 ? deltas : 0];
}

/**
 * Write the index of `manifest`, the manifest file whose identity is `identity`, unless the index
 * there is already that one's (or the manifest cannot be indexed: then a stale index is removed).
 * @param {Options} opts
 * @param {Manifest} manifest
 * @param {Identity | null} identity
 */
export async function writeIndex(opts, manifest, identity) {
  const file = indexPathOf(opts.manifest);
  const key = optionsKey(opts);
  if (identity === null || key === null || !indexable(manifest.files)) {
    fs.rmSync(file, { force: true });
    return false;
  }
  const header = readHeader(file);
  if (header !== null && header.whole && header.key === key && sameIdentity(header.manifest, identity)) return false;
  // Not fsync'd (a cache: a torn one after a crash does not parse, and the run reads the manifest)
  return writeAtomicWith(file, async (fh) => {
    for (const piece of indexText(opts, manifest, identity, key)) await fh.write(piece);
    return true;
  });
}

/**
 * The first line of an index, parsed, or null.
 * @param {string} file
 * @returns {Header | null}
 */
function readHeader(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const nl = buf.indexOf(10);
    const header = nl === -1 || nl >= n ? null : headerOf(buf.toString('utf8', 0, nl));
    const size = fs.fstatSync(fd).size;
    const tail = Buffer.alloc(END.length + 1);
    const got = fs.readSync(fd, tail, 0, tail.length, Math.max(0, size - tail.length));
    return header === null ? null : { ...header, whole: tail.toString('utf8', 0, got) === `\n${END}` };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** @param {string} text @returns {Omit<Header, 'whole'> | null} */
function headerOf(text) {
  try {
    const h = JSON.parse(text);
    return h !== null && typeof h === 'object' && h.format === INDEX_FORMAT ? h : null;
  } catch {
    return null;
  }
}

/**
 * A listed file of a folder as the index has it: [name, size, mtimeMs, variant sizes (-1: none) in
 * the header's `encodings` order, its deltas as [name, size] pairs or 0].
 * @typedef {[string, number, number, number[], [string, number][] | 0]} Listed
 * @typedef {{ files: Map<string, Listed>, outputs: number }} Folder the listed files by name, and how
 *   many variants and deltas they have
 */

/**
 * An index read for a warm run: its header, the entries the delta steps use, and each folder's
 * listed files (parsed when the walk comes to that folder).
 */
export class WarmIndex {
  /**
   * @param {Header} header
   * @param {[string, FileEntry][]} used
   * @param {Buffer} buf
   * @param {Map<string, number[]>} folders folder → [start, end, start, end, …] of its lines' file lists in buf
   */
  constructor(header, used, buf, folders) {
    this.header = header;
    this.used = used;
    this.buf = buf;
    this.folders = folders;
    /** when the manifest was written: no output of it is newer (lib/compress/plan/ownership.js) */
    this.at = writtenAt(/** @type {Manifest} */ (/** @type {unknown} */ (header.head)));
    /** each encoding of the header with its variants' suffix */
    this.suffixes = header.encodings.map((enc) => suffixOf(/** @type {any} */ (enc)));
  }

  /**
   * The files listed in folder `dir` ('' for the root); null when the index lists none there.
   * @param {string} dir
   * @returns {Folder | null}
   */
  folder(dir) {
    const ranges = this.folders.get(dir);
    if (ranges === undefined) return null;
    /** @type {Map<string, Listed>} */
    const files = new Map();
    let outputs = 0;
    for (let i = 0; i < ranges.length; i += 2) {
      for (const f of /** @type {Listed[]} */ (JSON.parse(this.buf.toString('utf8', ranges[i], ranges[i + 1])))) {
        files.set(f[0], f);
        for (const size of f[3]) if (size >= 0) outputs++;
        if (f[4] !== 0) outputs += f[4].length;
      }
    }
    return { files, outputs };
  }

  /**
   * Is the file `name` of a folder, of this size and mtime, a variant or delta that `folder` lists?
   * @param {Folder} folder
   * @param {string} name
   * @param {number} size
   * @param {number} mtimeMs
   * @returns {'variant' | 'delta' | null}
   */
  output(folder, name, size, mtimeMs) {
    const { suffixes } = this;
    for (let k = 0; k < suffixes.length; k++) {
      if (!name.endsWith(suffixes[k])) continue;
      const f = folder.files.get(name.slice(0, -suffixes[k].length));
      // not newer than the manifest that lists it (or than its source, within the slack)
      const ok = f !== undefined && f[3][k] === size && mtimeMs <= Math.max(this.at, f[2] + MTIME_SLACK_MS);
      return ok ? 'variant' : null;
    }
    const stem = name.endsWith('.dcz') || name.endsWith('.dcb') ? deltaStem(name) : null;
    const deltas = stem === null ? 0 : folder.files.get(stem)?.[4] ?? 0;
    if (deltas === 0 || mtimeMs > this.at) return null;
    return deltas.some(([d, s]) => d === name && s === size) ? 'delta' : null;
  }
}

/**
 * The index of the manifest `opts.manifest` as it is now, made under these options, for this
 * tool and settings; null when there is none, or it is stale or unreadable.
 * @param {Options} opts
 * @param {string} tool
 * @param {object} settings
 * @returns {WarmIndex | null}
 */
export function readIndex(opts, tool, settings) {
  const key = optionsKey(opts);
  if (key === null) return null;
  const file = indexPathOf(opts.manifest);
  const header = readHeader(file);
  const stale = header === null || !header.whole || header.key !== key;
  if (stale || !sameIdentity(header.manifest, identityOf(opts.manifest))) return null;
  if (header.head.tool !== tool || JSON.stringify(header.head.settings) !== JSON.stringify(settings)) return null;
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return null;
  }
  const first = buf.indexOf(10);
  const second = buf.indexOf(10, first + 1);
  const end = buf.length - END.length;
  if (second === -1 || end <= second || buf.toString('utf8', end) !== END) return null;
  /** @type {Map<string, number[]>} */
  const folders = new Map();
  try {
    const used = JSON.parse(buf.toString('utf8', first + 1, second));
    for (let start = second + 1; start < end;) {
      const end = buf.indexOf(10, start);
      const tab = buf.indexOf(9, start);
      if (tab === -1 || tab > end) return null;
      const dir = JSON.parse(buf.toString('utf8', start, tab));
      const ranges = folders.get(dir);
      if (ranges === undefined) folders.set(dir, [tab + 1, end]);
      else ranges.push(tab + 1, end);
      start = end + 1;
    }
    return new WarmIndex(header, used, buf, folders);
  } catch {
    return null;
  }
}

/** The index file's path in the site, or null (the manifest outside it). @param {string | null} manifestRel */
export const indexRelOf = (manifestRel) => (manifestRel === null ? null : `${manifestRel}${MANIFEST_INDEX_SUFFIX}`);
