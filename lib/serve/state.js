import { PrecompressorError } from '../errors.js';
import { ENCODINGS } from '../encodings.js';
import { createNegotiator } from './negotiate.js';
import { loadContext, buildTable } from './load.js';
import { deltaStem, readManifest, readManifestSync } from '../manifest.js';
import { createStaleQueue } from './stale.js';
import { createWatcher } from './file-events.js';
import { createUnlistedLookup } from './unlisted.js';
import { relInside, absPath } from '../paths.js';
import { singleFlight } from '../flow.js';
import { auditMessage, filesBelow, unlistedOf } from './audit.js';

/**
 * The state of one serveStatic middleware: its options, the current table, the watchers and the
 * reload queue, with the functions that change them. Request handling (middleware.js) only reads
 * `state.table` and calls `markStale`.
 */

const SUFFIXES = ENCODINGS.map((e) => e.suffix);

/**
 * @typedef {{
 *   opts: Readonly<import('./options.js').ServeOptions>,
 *   neg: ReturnType<typeof createNegotiator>,
 *   lctx: ReturnType<typeof loadContext>,
 *   unlisted: ReturnType<typeof createUnlistedLookup>,
 *   pathOptions: Readonly<{ windows: boolean }>,
 *   table: import('./table.js').Table,
 *   closed: boolean,
 *   markStale: (entry: import('./table.js').Entry) => void,
 *   settled: () => Promise<void>,
 *   watcher: ReturnType<typeof createWatcher> | null,
 *   reloading: boolean,
 *   dirty: Set<string>,
 *   reloads: ReturnType<typeof singleFlight<void>>,
 * }} ServeState
 */

/**
 * Read the manifest (synchronously: a missing or invalid one fails at startup), build the first
 * table and start the watchers.
 * @param {Readonly<import('./options.js').ServeOptions>} opts
 * @returns {ServeState}
 */
export function createState(opts) {
  const neg = createNegotiator(opts.encodings);
  const lctx = loadContext(opts, neg.maskOf);
  let manifest = null;
  if (opts.manifest !== null) {
    manifest = readManifestSync(opts.manifest, { maxBytes: opts.maxManifestBytes });
    if (manifest === null && !opts.unlisted) throw missingManifest(opts);
  }
  const audit = { mismatched: /** @type {import('./audit.js').Mismatch[]} */ ([]), changed: /** @type {string[]} */ ([]) };
  const table = /** @type {import('./table.js').Table} */ (buildTable(manifest, lctx, 'sync', audit));
  const s = /** @type {ServeState} */ ({
    opts, neg, lctx, unlisted: createUnlistedLookup(opts, lctx.realRoot), pathOptions: Object.freeze({ windows: process.platform === 'win32' }),
    table, closed: false, watcher: null, reloading: false, dirty: new Set(),
  });
  s.reloads = singleFlight(() => doReload(s));
  if (manifest !== null && opts.onWarning !== null) void startupAudit(s, manifest, audit);
  Object.assign(s, createStaleQueue(s));
  if (opts.watch) {
    s.watcher = createWatcher({
      manifest: opts.manifest,
      onFile: (abs) => onFile(s, abs),
      onManifest: () => void reload(s).catch(() => {}),
    });
    s.watcher.update(dirsOf(s));
  }
  return s;
}

/**
 * Say once, after start-up, what in the folder does not match its manifest (lib/serve/audit.js):
 * the walk runs in the background, so start-up does not wait for it.
 * @param {ServeState} s
 * @param {import('../manifest.js').Manifest} manifest
 * @param {{ mismatched: import('./audit.js').Mismatch[], changed: string[] }} found
 */
async function startupAudit(s, manifest, found) {
  const { opts } = s;
  const listed = { ...manifest.files, ...(manifest.siteDictionary ? { [manifest.siteDictionary.path]: true } : {}) };
  const rels = await filesBelow(opts.root).catch(() => /** @type {string[]} */ ([]));
  const unlisted = unlistedOf(rels, listed, { manifestRel: s.table.manifestRel, dotfiles: opts.dotfiles === 'allow' });
  const message = auditMessage(opts.root, { unlisted, mismatched: found.mismatched, changed: found.changed, servesUnlisted: opts.unlisted });
  if (message !== null && !s.closed) /** @type {(m: string) => void} */ (opts.onWarning)(message);
}

/**
 * The error for a manifest that was required (no `unlisted`, manifest not `false`) but is not there.
 * @param {Readonly<import("./options.js").ServeOptions>} opts
 */
function missingManifest(opts) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
    `No manifest at ${opts.manifest}: a manifest is required unless options.unlisted is set (serveStatic then ` +
    `serves only the files it lists). Run "precompressor ${opts.root}" first, pass options.manifest with its path, ` +
    'or set options.unlisted (or manifest: false) to serve files without one, as express.static does', { path: opts.manifest ?? undefined });
}

/**
 * The folders to watch: every folder of the table, as absolute paths.
 * @param {ServeState} s
 */
function dirsOf(s) {
  return [...s.table.dirs].map((d) => absPath(s.opts.root, d));
}

/**
 * A watcher event on `abs`: mark the entries it touches stale (the file itself, the original of
 * a variant, or every file of a folder when the platform did not name the file).
 * @param {ServeState} s
 * @param {string} abs
 */
export function onFile(s, abs) {
  const rel = relInside(s.opts.root, abs);
  if (rel === null) return;
  const files = s.table.files;
  const touched = [];
  if (rel === '*' || rel.endsWith('/*')) {
    const dir = rel.slice(0, -1);
    for (const [k, e] of files) if (k.startsWith(dir) && !k.slice(dir.length).includes('/')) touched.push(e);
  } else {
    const stem = deltaStem(rel);
    const names = [rel, ...SUFFIXES.filter((x) => rel.endsWith(x)).map((x) => rel.slice(0, -x.length)), ...(stem === null ? [] : [stem])];
    for (const name of names) {
      if (s.reloading) s.dirty.add(name);
      const e = files.get(name);
      if (e) touched.push(e);
    }
  }
  for (const e of touched) s.markStale(e);
}

/**
 * Build a new table from the manifest on disk; the old table serves until the new one is checked.
 * Files touched while it was being built are marked stale in the new one.
 * @param {ServeState} s
 */
async function doReload(s) {
  const { opts } = s;
  if (opts.manifest === null) return;
  s.reloading = true;
  s.dirty.clear();
  try {
    await s.unlisted.refresh();
    const m = await readManifest(opts.manifest, { maxBytes: opts.maxManifestBytes });
    if (m === null && !opts.unlisted) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `No manifest at ${opts.manifest}`, { path: opts.manifest });
    }
    const table = await buildTable(m, s.lctx, 'async');
    if (s.closed) return;
    s.table = table;
    for (const rel of s.dirty) {
      const e = table.files.get(rel);
      if (e) s.markStale(e);
    }
    s.watcher?.update(dirsOf(s));
  } finally {
    s.reloading = false;
    s.dirty.clear();
  }
}

/**
 * Re-read the manifest and re-check the disk, coalesced: one reload runs at a time and at most
 * one more is queued behind it. Rejects (keeping the current table) if the manifest is invalid.
 * @param {ServeState} s
 * @returns {Promise<void>}
 */
export function reload(s) {
  return s.reloads.run();
}
