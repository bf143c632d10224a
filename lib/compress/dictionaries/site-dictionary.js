import fs from 'node:fs/promises';
import pLimit from 'p-limit';
import { deltaEncoders, dictionaryHashOf, DELTA_MAX_SIZE } from './delta-encode.js';
import { encodeAll, openStoreWith, readChecked } from './deploy-deltas.js';
import { contentHash, deltaPath, entryOf, ownSiteDictionary, siteDictionaryPath } from '../../manifest/manifest.js';
import { variantPath } from '../../encodings.js';
import { absPath } from '../../paths.js';
import { writeAtomic, removeIfPresent } from '../../fs-atomic.js';
import { encodeBuffer, zlibOptions } from '../encoders/index.js';
import { extensionOf } from '../plan/index.js';
import { deltaCodecOf } from '../encoders/index.js';

/** @typedef {import('../../encodings.js').DeltaEncoding} DeltaEncoding */

/**
 * The site-dictionary step of a pass: one dictionary chosen from the pages, written at the root, and
 * every page's deltas against it; before addDeltas(), which leaves these (`keep`) and calls apply().
 *
 * @typedef {{ path: string | null, method: 'segments' | 'page' | 'previous' | 'none', size: number, bytes: number,
 *   pages: number, written: number, reused: number, pageBytes: number, ordinaryBytes: number,
 *   unavailable: string | null }} SiteDictionarySummary
 *   bytes: the dictionary's own best variant; pageBytes / ordinaryBytes: the pages with a variant
 *   against it, their smallest one against their best ordinary variant
 */

/**
 * @param {string | null} path
 * @param {SiteDictionarySummary['method']} method
 * @returns {SiteDictionarySummary}
 */
export function summaryOf(path, method) {
  return {
    path, method, size: 0, bytes: 0, pages: 0, written: 0, reused: 0, pageBytes: 0, ordinaryBytes: 0, unavailable: null,
  };
}

/** Extensions of the pages the dictionary is made from and for. */
const PAGE_EXTENSIONS = new Set(['html', 'htm']);

/** The site dictionary's family in the dictionary store (a colon: no file's family key has one). */
const SITE_FAMILY = 'precompressor:site-dictionary';

/** Pages read to choose the dictionary, at most (evenly spread over the sorted list). */
const CHOICE_PAGES = 256;

/** Fetch destination and match of the site dictionary: every document under the folder it is in. */
const SITE_MATCH = Object.freeze({ match: '*', dest: 'document' });

/**
 * @typedef {import('../../manifest/manifest.js').FileEntry} FileEntry
 * @typedef {import('./deploy-deltas.js').DeltaInput} DeltaInput
 */

/**
 * @param {string} rel
 * @param {FileEntry} entry
 * @param {import('../../options.js').Options} opts
 */
export function isPage(rel, entry, opts) {
  return PAGE_EXTENSIONS.has(extensionOf(rel)) && entry.skipped === undefined
    && entry.size >= opts.deltaMinSize && entry.size <= DELTA_MAX_SIZE;
}

/** @param {FileEntry | undefined} entry */
const bestOrdinary = (entry) =>
  entry === undefined ? Infinity : Math.min(entry.size, ...Object.values(entry.variants).map((v) => v.size));

/**
 * @param {import('./deploy-deltas.js').DeltaInput} input
 * @returns {Promise<{ keep: Set<string>, changed: boolean, summary: SiteDictionarySummary,
 *   apply: (entries: Map<string, import('../../manifest/manifest.js').FileEntry>) => void,
 *   path: string | null, hash: string | null }>}
 */
export async function addSiteDictionary(input) {
  const { opts, entries, previous, report } = input;
  const pages = [...entries].filter(([rel, e]) => isPage(rel, e, opts)).sort(([a], [b]) => (a < b ? -1 : 1));
  // Probed only for a site that may have one (two pages or more): the probe is most of a small pass's zlib time.
  const encoders = opts.siteDictionary && pages.length >= 2 ? deltaEncoders() : [];
  const summary = summaryOf(null, 'none');
  const none = { keep: new Set(), changed: false, summary, apply: () => {}, path: null, hash: null };
  const oldRel = ownSiteDictionary(previous)?.path ?? null;
  // Said only for a site that would have had one (two pages or more), so that others hear nothing.
  if (opts.siteDictionary && encoders.length === 0 && pages.length >= 2) {
    summary.unavailable = `Node ${process.version} has no zstd or Brotli encoder that takes a dictionary`;
  }
  // The store keeps the dictionary across builds that empty the folder (Vite), so that it can be kept.
  const store = encoders.length > 0 ? await openStoreWith(opts, input.remote) : null;
  const choice = store ? await choose(opts, pages, encoders, await previousDictionary(input, store)) : null;
  summary.method = choice?.method ?? 'none';
  const dict = choice?.bytes ?? null;
  const dictHash = dict === null ? null : contentHash(dict);
  const rel = dictHash === null ? null : siteDictionaryPath(dictHash);
  const changed = await removeOld(input, oldRel, rel);
  if (dict === null || rel === null || dictHash === null) return { ...none, changed };
  if (input.userFiles?.has(rel) || (entries.has(rel) && entries.get(rel)?.hash !== dictHash)) {
    report.warn(rel, 'a file of yours is where the site dictionary goes: no site dictionary');
    return { ...none, changed };
  }
  const fresh = entries.has(rel);
  let dictEntry = entries.get(rel);
  try {
    dictEntry ??= await writeDictionary(input, rel, dict, dictHash);
  } catch (err) {
    // Like a delta that cannot be written: a warning, and the pages are served as usual.
    report.warn(rel, `site dictionary not written (${/** @type {Error} */ (err).message})`);
    return { ...none, changed };
  }
  if (store && !opts.dryRun) {
    const current = new Map([[SITE_FAMILY, [{ hash: dictHash, bytes: async () => dict }]]]);
    const warn = (/** @type {Error} */ err) => report.warn(store.dir, `dictionary store not updated (${err.message})`);
    await store.record(current, 1).catch(warn);
  }
  const dictKey = dictionaryHashOf(dictHash);
  Object.assign(summary, { path: rel, size: dict.length, bytes: bestOrdinary(dictEntry) });
  const run = { ...input, encoders, summary: { written: 0 } };
  const { records, keep } = await encodePages(run, pages, dict, dictKey, summary);
  summarize(summary, records, entries, run.summary.written);
  const anyChange = changed || summary.written > 0 || !fresh || oldRel !== rel;
  return { keep, changed: anyChange, summary, apply: applier(rel, dictKey, records), path: rel, hash: dictHash };
}

/**
 * @param {string} rel the dictionary
 * @param {string} dictKey
 * @param {Map<string, import('../../manifest/manifest.js').DeltaEntry>} records
 */
function applier(rel, dictKey, records) {
  return (/** @type {Map<string, FileEntry>} */ all) => {
    const d = all.get(rel);
    if (d) all.set(rel, { ...d, dictionary: { hash: dictKey, ...SITE_MATCH, hashed: true } });
    for (const [page, rec] of records) {
      const e = all.get(page);
      if (e !== undefined) all.set(page, { ...e, deltas: { ...e.deltas, [dictKey]: rec } });
    }
  };
}

/**
 * The site-dictionary step of a watch batch: its pages' variants against the last whole pass's
 * dictionary; null when that file changed (a whole pass must choose again).
 * @param {import('./deploy-deltas.js').DeltaInput} input
 * @param {import('../../manifest/manifest.js').SiteDictionaryEntry} sd
 * @param {FileEntry} dictEntry its entry in the manifest
 */
export async function keepSiteDictionary(input, sd, dictEntry) {
  const { opts, entries } = input;
  const encoders = opts.siteDictionary ? deltaEncoders() : [];
  const summary = { ...summaryOf(sd.path, 'previous'), size: dictEntry.size, bytes: bestOrdinary(dictEntry) };
  if (encoders.length === 0) return null;
  const dict = await readChecked(opts, sd.path, dictEntry);
  if (dict === null) return null;
  const dictKey = dictionaryHashOf(sd.hash);
  const pages = [...entries].filter(([rel, e]) => isPage(rel, e, opts));
  const run = { ...input, encoders, summary: { written: 0 } };
  const { records, keep } = await encodePages(run, pages, dict, dictKey, summary);
  summarize(summary, records, entries, run.summary.written);
  const apply = applier(sd.path, dictKey, records);
  return { keep, changed: summary.written > 0, summary, apply, path: sd.path, hash: sd.hash };
}

/**
 * The previous build's dictionary: its file if unchanged, else the newest in the store.
 * @param {DeltaInput} input
 * @param {import('./dictionary-store.js').DictionaryStore} store
 */
async function previousDictionary(input, store) {
  const sd = ownSiteDictionary(input.previous);
  const e = sd === undefined ? undefined : input.entries.get(sd.path);
  const here = sd !== undefined && e !== undefined && e.hash === sd.hash
    ? await readChecked(input.opts, sd.path, e)
    : null;
  if (here !== null) return here;
  const [hash] = store.versions(SITE_FAMILY);
  return hash === undefined ? null : store.read(hash);
}

/**
 * The dictionary for these pages, chosen on at most CHOICE_PAGES of them (not all held in memory).
 * @param {import('../../options.js').Options} opts
 * @param {[string, FileEntry][]} pages
 * @param {readonly DeltaEncoding[]} encoders
 * @param {Buffer | null} previous the previous build's dictionary, kept while nearly as good
 */
async function choose(opts, pages, encoders, previous) {
  const step = Math.max(1, pages.length / CHOICE_PAGES);
  const picked = Array.from({ length: Math.min(pages.length, CHOICE_PAGES) }, (_, i) => pages[Math.floor(i * step)]);
  const sample = [...new Set(picked)];
  if (sample.length < 2) return null; // no dictionary of one page: not read (a warm run reads no content)
  const read = await Promise.all(sample.map(([rel, e]) => readChecked(opts, rel, e)));
  const ok = sample.filter((_, i) => read[i] !== null);
  if (ok.length < 2) return null;
  const pageBytes = /** @type {Buffer[]} */ (read.filter((b) => b !== null));
  const via = encoders.find((e) => deltaCodecOf(e).scoresFast) ?? encoders[0];
  const { chooseDictionary } = await import('./choose-dictionary.js'); // only for a site of pages (#31)
  return chooseDictionary(pageBytes, ok.map(([, e]) => bestOrdinary(e)), via, previous);
}

/**
 * Every page's variants against the dictionary, reused or made; a page that fails is a warning.
 * @param {Parameters<typeof encodeAll>[0] & DeltaInput} run
 * @param {[string, FileEntry][]} pages
 * @param {Buffer} dict
 * @param {string} dictKey
 * @param {SiteDictionarySummary} summary
 */
async function encodePages(run, pages, dict, dictKey, summary) {
  /** @type {Map<string, import('../../manifest/manifest.js').DeltaEntry>} */
  const records = new Map();
  const keep = new Set();
  const limit = pLimit(Math.max(2, Math.min(run.opts.concurrency, 4)));
  await Promise.all(pages.map(([page, e]) => limit(async () => {
    const old = reusable(run, page, e, dictKey);
    if (old !== null) summary.reused += Object.keys(old).length;
    const data = old === null ? await readChecked(run.opts, page, e) : null;
    if (old === null && data === null) return; // changed since its variants were made
    const rec = old ?? (await encodeAll(run, page, /** @type {Buffer} */ (data), dict, dictKey, bestOrdinary(e)));
    if (Object.keys(rec).length === 0) return;
    records.set(page, rec);
    for (const enc of Object.keys(rec)) keep.add(deltaPath(page, dictKey, /** @type {DeltaEncoding} */ (enc)));
  }).catch((err) => run.report.warn(page, `no variant against the site dictionary (${err.message})`))));
  return { records, keep };
}

/**
 * @param {SiteDictionarySummary} summary
 * @param {Map<string, import('../../manifest/manifest.js').DeltaEntry>} records
 * @param {Map<string, FileEntry>} entries
 * @param {number} written
 */
function summarize(summary, records, entries, written) {
  summary.pages = records.size;
  summary.written = written;
  for (const [page, rec] of records) {
    summary.pageBytes += Math.min(...Object.values(rec).map((v) => /** @type {{ size: number }} */ (v).size));
    summary.ordinaryBytes += bestOrdinary(entries.get(page));
  }
}

/**
 * The previous pass's record of this page against this dictionary, when its files are all still there.
 * @param {DeltaInput} input
 * @param {string} page
 * @param {FileEntry} entry
 * @param {string} dictKey
 */
function reusable(input, page, entry, dictKey) {
  const prev = entryOf(input.previous, page);
  const old = prev !== undefined && prev.hash === entry.hash && prev.deltas && Object.hasOwn(prev.deltas, dictKey)
    ? prev.deltas[dictKey]
    : null;
  if (old === null || Object.keys(old).length === 0) return null;
  const intact = Object.entries(old).every(([enc, v]) =>
    input.onDisk.get(deltaPath(page, dictKey, /** @type {any} */ (enc))) === v.size);
  return intact ? old : null;
}

/**
 * Write the dictionary, then its variants; its entry is added to `entries`.
 * @param {DeltaInput} input
 * @param {string} rel
 * @param {Buffer} dict
 * @param {string} hash
 */
async function writeDictionary(input, rel, dict, hash) {
  const { opts, entries, report } = input;
  const abs = absPath(opts.root, rel);
  /** @type {import('../../manifest/manifest.js').FileEntry} */
  const entry = { size: dict.length, mtimeMs: 0, hash, variants: {} };
  if (!opts.dryRun) {
    await writeAtomic(abs, dict, { checkParent: true });
    entry.mtimeMs = (await fs.stat(abs)).mtimeMs;
  }
  report.change(rel, 'site dictionary');
  for (const enc of opts.encodings) {
    try {
      const out = await encodeBuffer(dict, enc, zlibOptions(enc, { ...opts, size: dict.length, mode: 'text' }));
      if (out.length >= dict.length * opts.minRatio) continue;
      if (!opts.dryRun) await writeAtomic(variantPath(abs, enc), out, { checkParent: true });
      entry.variants[enc] = { size: out.length };
    } catch (err) {
      report.warn(variantPath(rel, enc), `not written (${/** @type {Error} */ (err).message})`);
    }
  }
  entries.set(rel, entry);
  return entry;
}

/**
 * Remove the previous site dictionary when another takes its place, if it still has the recorded hash.
 * @param {DeltaInput} input
 * @param {string | null} oldRel
 * @param {string | null} rel
 */
async function removeOld(input, oldRel, rel) {
  const { opts, entries, previous, report } = input;
  const old = oldRel === null ? undefined : entries.get(oldRel);
  if (oldRel === null || oldRel === rel || old === undefined) return false;
  if (old.hash !== ownSiteDictionary(previous)?.hash) return false;
  entries.delete(oldRel);
  report.change(oldRel, 'remove (old site dictionary)');
  if (opts.dryRun) return true;
  for (const p of [oldRel, ...Object.keys(old.variants).map((enc) => variantPath(oldRel, /** @type {any} */ (enc)))]) {
    await removeIfPresent(absPath(opts.root, p)).catch((err) => report.warn(p, `not removed (${err.message})`));
  }
  return true;
}
