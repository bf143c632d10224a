import fs from 'node:fs/promises';
import crypto from 'node:crypto';
import pLimit from 'p-limit';
import { dictionaryHashOf, deltaEncoders, encodeDelta, verifyDelta, DELTA_MAX_SIZE } from './delta-encode.js';
import { escapeUrlPattern, familyOf, inImmutableFolder, INDEX_FILES } from '../../site-policy.js';
import { openDictionaryStore } from './dictionary-store.js';
import { contentHash, deltaPath, entryOf, sha256 } from '../../manifest/manifest.js';
import { writeAtomic, removeIfPresent } from '../../fs-atomic.js';
import { extensionOf } from '../plan/index.js';
import { walk } from '../plan/index.js';
import { cacheKey, taskStats } from '../cache/index.js';
import { storeOf } from '../cache/index.js';
import { performance } from 'node:perf_hooks';
import { userFileMessage } from '../plan/index.js';
import { absPath } from '../../paths.js';

/** @typedef {import('../../encodings.js').DeltaEncoding} DeltaEncoding */

/**
 * The deploy-delta step of a pass: each eligible file's `dictionary` record and its deltas against the
 * earlier versions of its family, each proven before it is written; then this build's versions stored.
 *
 * @typedef {import('../../options.js').Options} Options
 * @typedef {import('./dictionary-store.js').DictionaryStore} Store
 * @typedef {{ hash: string, bytes: Buffer }} PreviousVersion
 * @typedef {{ encoders: DeltaEncoding[], files: number, written: number, reused: number, removed: number,
 *   bytes: number, savedBytes: number, unhashed: number, byContent: number, unavailable: string | null }} DeltaSummary
 *   files: files with a hashed name (immutable, a dictionary a browser keeps) and at least one delta;
 *   bytes: their deltas against the newest earlier version; savedBytes: what a returning visitor
 *   (holding that version) saves on them against the best variant; unhashed: files with deltas whose
 *   name has no hash (a browser keeps them only if they are served with a max-age); byContent: files
 *   named only by a hash with deltas (used when the browser offers that very version)
 */

/** Pages answered at their folder's URL. */
const INDEX_PAGES = new Set([...INDEX_FILES, 'index.htm']);

/**
 * The family of a file for deltas: by name, or for a name that is only a hash the folder's files of its
 * extension, paired by content (`byContent`).
 * @param {string} rel
 * @param {Options} opts
 */
export function deltaFamilyOf(rel, opts) {
  const fam = familyOf(rel, opts.hashPattern);
  if (fam !== null && !fam.hashed && INDEX_PAGES.has(fam.match)) {
    // served at its folder's URL (`docs/` for `docs/index.html`): a pattern that matches that URL too
    return { ...fam, match: `{${fam.match}}?`, byContent: false };
  }
  if (fam !== null) return { ...fam, byContent: false };
  const slash = rel.lastIndexOf('/');
  const base = rel.slice(slash + 1);
  if (base.includes(':')) return null;
  const ext = base.includes('.') ? base.slice(base.indexOf('.')) : '';
  const { dest } = /** @type {import('../../site-policy.js').Family} */ (familyOf(rel, () => null));
  // no named family's key starts its base name with `*`: the folder's key cannot be one of theirs
  const key = `${rel.slice(0, slash + 1)}*${ext}`;
  return { key, match: `*${escapeUrlPattern(ext)}`, dest, hashed: true, byContent: true };
}

/**
 * @param {string} rel
 * @param {import('../../manifest/manifest.js').FileEntry} entry
 * @param {Options} opts
 */
function eligible(rel, entry, opts) {
  if (entry.skipped !== undefined && entry.skipped !== 'not-smaller') return false;
  return opts.deltaExtensions.has(extensionOf(rel)) && entry.size >= opts.deltaMinSize && entry.size <= DELTA_MAX_SIZE;
}

/**
 * @param {import("../../manifest/manifest.js").FileEntry} entry
 */
function bare(entry) {
  const rest = { ...entry };
  delete rest.dictionary;
  delete rest.deltas;
  delete rest.hashed;
  return rest;
}

/**
 * Smallest ordinary representation: what a returning visitor downloads without deltas.
 * @param {import('../../manifest/manifest.js').FileEntry} entry
 */
function bestOrdinary(entry) {
  return Math.min(entry.size, ...Object.values(entry.variants).map((v) => v.size));
}

/**
 * @param {Options} opts
 * @param {string} previous
 * @param {Set<string>} keys
 */
async function previousVersions(opts, previous, keys) {
  /** @type {Map<string, PreviousVersion[]>} */
  const out = new Map();
  const walked = await walk(previous, { dotfiles: false });
  for (const f of walked.files) {
    if (!opts.deltaExtensions.has(extensionOf(f.rel))) continue;
    if (f.size < opts.deltaMinSize || f.size > DELTA_MAX_SIZE) continue;
    const fam = deltaFamilyOf(f.rel, opts);
    if (fam === null || !keys.has(fam.key)) continue;
    const bytes = await fs.readFile(absPath(previous, f.rel));
    const list = out.get(fam.key) ?? [];
    list.push({ hash: contentHash(bytes), bytes });
    out.set(fam.key, list);
  }
  return out;
}

/**
 * @typedef {{ opts: Options, entries: Map<string, import('../../manifest/manifest.js').FileEntry>,
 *   previous: import('../../manifest/manifest.js').Manifest | null, onDisk: Map<string, number>,
 *   report: { warn(p: string, m: string): void, change(p: string, a: string): void, fail(f: object): void },
 *   cache?: { task: import('../cache/index.js').From | null, add(s: ReturnType<typeof taskStats>): void },
 *   remote?: import('../cache/index.js').RemoteEntries | null,
 *   userFiles?: { has(rel: string): boolean }, prepared?: Promise<PreparedDeltas | null> | null }} DeltaInput
 *   onDisk: the delta files found by the walk (path → size); userFiles: files of the user's at our paths, never
 *   written; prepared: from prepareDeltas(), begun before
 * @typedef {DeltaInput & { encoders: readonly DeltaEncoding[], summary: DeltaSummary, keep: Set<string> }} DeltaRun
 */

/**
 * `siteApply` puts back the pages' records against the site dictionary (which this step drops)
 * before the entries are compared with what they were.
 * @param {DeltaInput & {
 *   siteApply?: (entries: Map<string, import('../../manifest/manifest.js').FileEntry>) => void }} input
 * @returns {Promise<{ changed: boolean, summary: DeltaSummary }>}
 */
export async function addDeltas(input) {
  const { opts, entries, onDisk, report } = input;
  const ready = await (input.prepared ?? prepareDeltas(opts, input.remote, false));
  const encoders = ready?.encoders ?? (opts.deltas ? deltaEncoders() : []);
  /** @type {DeltaSummary} */
  const summary = {
    encoders: [...encoders], files: 0, written: 0, reused: 0, removed: 0, bytes: 0, savedBytes: 0, unhashed: 0,
    byContent: 0, unavailable: null,
  };
  if (opts.deltas && encoders.length === 0) {
    summary.unavailable = `Node ${process.version} has no zstd or Brotli encoder that takes a dictionary ` +
      '(Node >= 22.19 / 24.6 for dcz, >= 24.15 for dcb)';
  }
  const before = dictionaryState(entries);
  const { members, byContent } = assignFamilies(entries, opts);
  // No encoder, no store: versions kept for deltas this Node can never make would only cost disk.
  const store = ready ? ready.store : encoders.length > 0 ? await openStoreWith(opts, input.remote) : null;
  /** @type {DeltaRun} */
  const run = { ...input, encoders, summary, keep: new Set() };
  if (store) {
    const earlier = opts.previous ? await previousVersions(opts, opts.previous, new Set(members.keys())) : new Map();
    /** @type {{ rel: string, dicts: ReturnType<typeof dictionariesOf>, size: number }[]} */
    const work = [];
    for (const [key, rels] of members) {
      const current = new Set(rels.map((rel) => /** @type {any} */ (entries.get(rel)).hash));
      const dicts = dictionariesOf(store, key, earlier.get(key) ?? [], current, opts.dictionaryVersions * rels.length);
      if (byContent.has(key)) {
        for (const [rel, paired] of await pairedByContent(opts, entries, rels, dicts)) {
          work.push({ rel, dicts: paired, size: /** @type {any} */ (entries.get(rel)).size });
        }
        continue;
      }
      for (const rel of rels) work.push({ rel, dicts, size: /** @type {any} */ (entries.get(rel)).size });
    }
    // Largest first, so that a big bundle does not finish last.
    const limit = pLimit(Math.max(2, Math.min(opts.concurrency, 4)));
    await Promise.all(work.sort((a, b) => b.size - a.size).map(({ rel, dicts }) =>
      // A delta that cannot be written is a warning: the file is served as usual without it.
      limit(() => deltasFor(run, rel, dicts)).catch((err) => report.warn(rel, `deltas not written (${err.message})`))));
  }
  for (const rel of onDisk.keys()) {
    if (run.keep.has(rel)) continue;
    report.change(rel, 'remove (stale delta)');
    summary.removed++;
    const failed = (/** @type {any} */ err) =>
      report.fail({ path: rel, code: err.code ?? 'ERR_PRECOMPRESSOR_FILE', message: err.message });
    if (!opts.dryRun) await removeIfPresent(absPath(opts.root, rel)).catch(failed);
  }
  if (store && !opts.dryRun) {
    // The store is a cache: when it cannot be written, the next build gets fewer deltas.
    const warn = (/** @type {Error} */ err) => report.warn(store.dir, `dictionary store not updated (${err.message})`);
    await recordVersions(store, members, entries, opts).catch(warn);
  }
  input.siteApply?.(entries);
  const changed = summary.written > 0 || summary.removed > 0 || dictionaryState(entries) !== before;
  return { changed, summary };
}

/**
 * @typedef {{ encoders: readonly DeltaEncoding[], store: Store | null }} PreparedDeltas
 */

/**
 * The deltas' encoders (probed) and store (its index read, with `early` its folders made), which a pass
 * makes ready while it compresses, where they would wait for its last file (#31). Never rejects: null
 * when something failed, and addDeltas() then meets (and reports) it itself.
 * @param {Options} opts
 * @param {import('../cache/index.js').RemoteEntries | null | undefined} remote
 * @param {boolean} [early] make the store's folders now (not on a dry run)
 * @returns {Promise<PreparedDeltas | null>}
 */
export async function prepareDeltas(opts, remote, early = true) {
  try {
    const encoders = opts.deltas ? deltaEncoders() : [];
    // No encoder, no store: versions kept for deltas this Node can never make would only cost disk.
    const store = encoders.length > 0 ? await openStoreWith(opts, remote) : null;
    if (early && store && !opts.dryRun) await store.makeFolders();
    return { encoders, store };
  } catch {
    return null;
  }
}

/**
 * The dictionary store of a pass, read through the remote cache when the pass has one
 * (dictionary-remote.js, loaded only then: #31).
 * @param {Options} opts
 * @param {import('../cache/index.js').RemoteEntries | null | undefined} remote
 */
export async function openStoreWith(opts, remote) {
  const store = await openDictionaryStore(opts);
  return remote ? (await import('./dictionary-remote.js')).withRemote(store, remote) : store;
}

/**
 * For the files of a folder named only by a hash: each one's earlier version found by content, if close enough.
 * @param {Options} opts
 * @param {Map<string, import('../../manifest/manifest.js').FileEntry>} entries
 * @param {string[]} rels this build's files of the folder
 * @param {{ hash: string, read: () => Promise<Buffer | null> }[]} dicts the folder's earlier versions
 * @returns {Promise<Map<string, { hash: string, read: () => Promise<Buffer | null> }[]>>}
 */
async function pairedByContent(opts, entries, rels, dicts) {
  const { pairByContent, sketchOf } = await import('./similarity.js'); // only for such folders (#31)
  const earlier = [];
  for (const d of dicts) {
    const bytes = await d.read();
    if (bytes !== null) earlier.push({ item: d, size: bytes.length, sketch: sketchOf(bytes) });
  }
  const fresh = [];
  for (const rel of rels) {
    const entry = /** @type {import('../../manifest/manifest.js').FileEntry} */ (entries.get(rel));
    const data = earlier.length > 0 ? await readChecked(opts, rel, entry) : null;
    if (data !== null) fresh.push({ item: rel, size: data.length, sketch: sketchOf(data) });
  }
  const out = new Map(rels.map((rel) => [rel, /** @type {typeof dicts} */ ([])]));
  for (const p of pairByContent(fresh, earlier)) out.set(p.fresh, [p.earlier]);
  return out;
}

/**
 * @param {Map<string, import("../../manifest/manifest.js").FileEntry>} entries
 */
function dictionaryState(entries) {
  // One entry at a time: a copy of a big site's entries as pairs would be the pass's peak.
  let state = '';
  for (const [rel, e] of entries) {
    if (e.dictionary !== undefined || e.hashed !== undefined) state += `${JSON.stringify([rel, e])},`;
  }
  return state;
}

/**
 * An entry's family for deltas (null when it gets none) and whether its name is immutable when served.
 * @param {string} rel
 * @param {import("../../manifest/manifest.js").FileEntry} entry
 * @param {Options} opts
 */
function familyState(rel, entry, opts) {
  const named = deltaFamilyOf(rel, opts);
  // immutable when served, whatever its size or type
  const hashed = named?.hashed === true || inImmutableFolder(rel);
  const fam = opts.deltas && eligible(rel, entry, opts) ? named : null;
  return { hashed, fam };
}

/**
 * Does the delta step change or use this entry (a family, or delta fields to drop or add)?
 * @param {import("../../manifest/manifest.js").FileEntry} entry
 * @param {boolean} hashed
 * @param {unknown} fam
 */
const touches = (entry, hashed, fam) =>
  fam !== null || entry.dictionary !== undefined || entry.deltas !== undefined || (entry.hashed === true) !== hashed;

/**
 * Would the delta step change or use this entry? Those it would not, it leaves as they are: a pass
 * that changed no file may run it on the others alone (lib/compress/pass/warm-run.js).
 * @param {string} rel
 * @param {import("../../manifest/manifest.js").FileEntry} entry
 * @param {Options} opts
 */
export function deltasTouch(rel, entry, opts) {
  const { hashed, fam } = familyState(rel, entry, opts);
  return touches(entry, hashed, fam);
}

/**
 * Give every eligible entry its `dictionary` record (and drop the old delta fields of all).
 * @returns {{ members: Map<string, string[]>, byContent: Set<string> }} family key → this build's files
 *   in it; the keys of the families paired by content
 * @param {Map<string, import("../../manifest/manifest.js").FileEntry>} entries
 * @param {Options} opts
 */
function assignFamilies(entries, opts) {
  /** @type {Map<string, string[]>} */
  const members = new Map();
  /** @type {Set<string>} */
  const byContent = new Set();
  for (const [rel, entry] of entries) {
    const { hashed, fam } = familyState(rel, entry, opts);
    // Nothing to drop or add: the entry stands as it is (no copy of every entry of a large site).
    if (!touches(entry, hashed, fam)) continue;
    const next = bare(entry);
    if (hashed) next.hashed = true;
    if (fam !== null) {
      next.dictionary = { hash: dictionaryHashOf(entry.hash), match: fam.match, dest: fam.dest, hashed: fam.hashed };
      members.set(fam.key, [...(members.get(fam.key) ?? []), rel]);
      if (fam.byContent) byContent.add(fam.key);
    }
    entries.set(rel, next);
  }
  return { members, byContent };
}

/**
 * Make or reuse the deltas of one file against each dictionary, and record them in its entry.
 * @param {DeltaRun} run
 * @param {string} rel
 * @param {{ hash: string, read: () => Promise<Buffer | null> }[]} dicts
 */
async function deltasFor(run, rel, dicts) {
  const entry = /** @type {import('../../manifest/manifest.js').FileEntry} */ (run.entries.get(rel));
  const prev = entryOf(run.previous, rel);
  const reusable = prev?.hash === entry.hash ? prev.deltas ?? {} : {};
  const best = bestOrdinary(entry);
  /** @type {Record<string, import('../../manifest/manifest.js').DeltaEntry>} */
  const deltas = {};
  let data = null;
  for (const [i, d] of dicts.entries()) {
    const dictKey = dictionaryHashOf(d.hash);
    const old = Object.hasOwn(reusable, dictKey) ? reusable[dictKey] : undefined;
    const intact = old && Object.entries(old).every(([enc, v]) =>
      run.onDisk.get(deltaPath(rel, dictKey, /** @type {any} */ (enc))) === v.size);
    let rec = intact ? old : undefined;
    if (rec) run.summary.reused += Object.keys(rec).length;
    else {
      data ??= await readChecked(run.opts, rel, entry);
      if (data === null) return; // changed since its variants were made: no deltas this pass
      const dict = await d.read();
      if (dict === null) continue;
      rec = await encodeAll(run, rel, data, dict, dictKey, best);
    }
    deltas[dictKey] = rec;
    for (const enc of Object.keys(rec)) run.keep.add(deltaPath(rel, dictKey, /** @type {any} */ (enc)));
    const sizes = Object.values(rec).map((v) => v.size);
    if (i === 0 && sizes.length > 0) count(run.summary, entry, best, Math.min(...sizes));
  }
  if (Object.keys(deltas).length > 0) run.entries.set(rel, { ...entry, deltas });
}

/**
 * Count a file's delta in the summary, as servable only when a browser keeps the file as a dictionary
 * by default (a hashed name) and offers it for the new version (not a folder's `*.js`).
 * @param {DeltaSummary} summary
 * @param {import('../../manifest/manifest.js').FileEntry} entry
 * @param {number} best its best ordinary representation
 * @param {number} smallest its smallest delta against the newest earlier version
 */
function count(summary, entry, best, smallest) {
  const d = entry.dictionary;
  if (!d?.hashed) summary.unhashed++;
  else if (d.match.startsWith('*')) summary.byContent++;
  else {
    summary.files++;
    summary.bytes += smallest;
    summary.savedBytes += best - smallest;
  }
}

/**
 * @param {Options} opts
 * @param {string} rel
 * @param {import('../../manifest/manifest.js').FileEntry} entry
 */
export async function readChecked(opts, rel, entry) {
  const data = await fs.readFile(absPath(opts.root, rel)).catch(() => null);
  return data !== null && contentHash(data) === entry.hash ? data : null;
}

/**
 * Encode, check and write the deltas of one file against one dictionary; {} when none is kept.
 * @param {Pick<DeltaRun, 'opts' | 'encoders' | 'report' | 'userFiles' | 'cache' | 'remote'>
 *   & { summary: { written: number } }} run
 * @param {string} rel
 * @param {Buffer} data
 * @param {Buffer} dict
 * @param {string} dictKey
 * @param {number} best
 */
export async function encodeAll(run, rel, data, dict, dictKey, best) {
  const digest = crypto.createHash('sha256').update(dict).digest();
  /** @type {import('../../manifest/manifest.js').DeltaEntry} */
  const rec = {};
  for (const enc of run.encoders) {
    const { out, cached } = await cachedDelta(run, enc, data, dict, digest);
    if (out === null || out.length > best * (1 - run.opts.deltaMargin)) continue;
    if (!verifyDelta(enc, out, dict, digest, data)) {
      run.report.warn(rel, `${enc} delta against ${dictKey} did not decode to the file: not kept`);
      continue;
    }
    const target = deltaPath(rel, dictKey, enc);
    if (run.userFiles?.has(target)) {
      run.report.warn(target, userFileMessage(target, rel, `${enc} delta against this dictionary`));
      continue;
    }
    run.report.change(target, cached ? `delta (${enc}, from cache)` : `delta (${enc})`);
    if (!run.opts.dryRun) await writeAtomic(absPath(run.opts.root, target), out, { checkParent: true });
    rec[enc] = { size: out.length, hash: contentHash(out) };
    run.summary.written++;
  }
  return rec;
}

/**
 * A delta from the variant cache, or encoded and added to it. `out` null: this Node could not make it.
 * @param {Pick<DeltaRun, 'cache' | 'remote'>} run
 * @returns {Promise<{ out: Buffer | null, cached: boolean }>}
 * @param {DeltaEncoding} enc
 * @param {Buffer} data
 * @param {Buffer} dict
 * @param {Buffer} digest
 */
async function cachedDelta(run, enc, data, dict, digest) {
  const c = run.cache?.task;
  if (!c) return { out: await encodeDelta(enc, data, dict, digest), cached: false };
  const stats = taskStats();
  const key = cacheKey(enc, contentHash(data), digest.toString('hex'));
  const store = storeOf(c.store);
  const proves = (/** @type {Buffer} */ bytes) => verifyDelta(enc, bytes, dict, digest, data);
  const taken = c.read ? await takeDelta(run, store, key, proves, stats) : null;
  if (taken !== null) {
    run.cache?.add(stats);
    return { out: taken, cached: true };
  }
  const started = performance.now();
  const out = await encodeDelta(enc, data, dict, digest);
  stats.misses = 1;
  if (out !== null) {
    try {
      stats.written = await store.put(key, out, { size: out.length, encodeMs: performance.now() - started });
      await run.remote?.store(key, undefined, out);
    } catch (err) {
      stats.error = /** @type {Error} */ (err).message;
    }
  }
  run.cache?.add(stats);
  return { out, cached: false };
}

/**
 * A delta of `key` from the variant store, else the remote cache, that `proves` (decodes against its
 * dictionary to the file); one that does not is evicted.
 * @param {Pick<DeltaRun, 'remote'>} run
 * @param {import('../cache/index.js').VariantStore} store
 * @param {string} key
 * @param {(bytes: Buffer) => boolean} proves
 * @param {ReturnType<typeof taskStats>} stats
 * @returns {Promise<Buffer | null>}
 */
async function takeDelta(run, store, key, proves, stats) {
  let stored = await store.get(key);
  if (stored === null && run.remote) {
    const got = await run.remote.entry(key);
    if (got !== null && got.data !== null) {
      const info = { size: got.rec.size, encodeMs: got.rec.encodeMs };
      await store.put(key, got.data, info).catch(() => 0);
      stored = { ...info, sha256: got.rec.sha256, bytes: got.data };
    }
  }
  const bytes = stored?.bytes ?? null;
  if (stored === null || bytes === null) return null;
  const intact = sha256(bytes, 'hex') === stored.sha256;
  if (!intact || !proves(bytes)) {
    await store.evict(key);
    if (intact) stats.rejected = 1;
    return null;
  }
  Object.assign(stats, { hits: 1, cpuSavedMs: stored.encodeMs });
  return bytes;
}

/**
 * The dictionaries for one family, at most `max`: `previous`'s, then the stored versions, newest first.
 * @returns {{ hash: string, read: () => Promise<Buffer | null> }[]}
 * @param {Store} store
 * @param {string} key
 * @param {PreviousVersion[]} fromPrevious
 * @param {Set<string>} current
 * @param {number} max
 */
function dictionariesOf(store, key, fromPrevious, current, max) {
  /** @type {{ hash: string, read: () => Promise<Buffer | null> }[]} */
  const out = [];
  const seen = new Set(current);
  for (const v of fromPrevious) {
    if (seen.has(v.hash)) continue;
    seen.add(v.hash);
    out.push({ hash: v.hash, read: async () => v.bytes });
  }
  for (const hash of store.versions(key)) {
    if (seen.has(hash)) continue;
    seen.add(hash);
    out.push({ hash, read: () => store.read(hash) });
  }
  return out.slice(0, max);
}

/**
 * Make this build's versions the newest of their families in the store.
 * @param {Map<string, string[]>} members
 * @param {Store} store
 * @param {Map<string, string[]>} members
 * @param {Map<string, import("../../manifest/manifest.js").FileEntry>} entries
 * @param {Options} opts
 */
async function recordVersions(store, members, entries, opts) {
  /** @type {Map<string, { hash: string, bytes: () => Promise<Buffer> }[]>} */
  const current = new Map();
  for (const [key, rels] of members) {
    for (const rel of rels) {
      const e = /** @type {import('../../manifest/manifest.js').FileEntry} */ (entries.get(rel));
      const version = { hash: e.hash, bytes: () => fs.readFile(absPath(opts.root, rel)) };
      current.set(key, [...(current.get(key) ?? []), version]);
    }
  }
  await store.record(current, opts.dictionaryVersions + 1);
}

