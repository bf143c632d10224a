import fs from 'node:fs';
import path from 'node:path';
import { PrecompressorError } from '../errors.js';
import { VARIANT_SUFFIX, deltaStem } from '../manifest.js';
import { normalizeServeOptions } from './options.js';
import { createNegotiator } from './negotiate.js';
import { parseRequestPath, folderRedirectLocation } from './request-path.js';
import { resolveEntry, statRep, contentTypeOf, varyHead } from './table.js';
import { readManifestSync, readManifestAsync, loadContext, buildTable } from './load.js';
import { createStaleQueue } from './stale.js';
import { respond, endWith, isGone } from './respond.js';
import { createWatcher } from './file-events.js';
import { createUnlistedLookup } from './unlisted.js';
import { relInside } from '../paths.js';
import { chooseDelta } from './dictionary.js';

const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0);
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR']);
const SUFFIXES = Object.values(VARIANT_SUFFIX);

/**
 * A drop-in for `express.static(root, options)` that serves the precompressed variants listed in
 * the precompressor manifest. `(req, res, next)` middleware for node:http, Connect and Express 4/5.
 * Reads and checks the manifest synchronously; throws ERR_PRECOMPRESSOR_MANIFEST when it is missing
 * (unless `unlisted` or `manifest: false`) or invalid.
 *
 * Freshness: streamed files are opened and fstat'd before any header is written (size, and mtime
 * for originals, must match the manifest; otherwise the entry turns stale); folders are watched
 * (`watch`, default on) so that changed files, including those served from memory, turn stale at
 * once and are re-checked, and a rewritten manifest is reloaded. A stale entry is served as the
 * identity file with its real fstat size, never with a variant.
 *
 * @param {string} root
 * @param {Partial<import('./options.js').ServeOptions> & { manifest?: string | false, maxAge?: number | string, spa?: boolean | string, index?: string | string[] | false, extensions?: string[] | false }} [options]
 */
export function serveStatic(root, options = {}) {
  const opts = normalizeServeOptions(root, options);
  const neg = createNegotiator(opts.encodings);
  const lctx = loadContext(opts, neg.maskOf);
  const unlisted = createUnlistedLookup(opts, lctx.realRoot);
  const windows = process.platform === 'win32';
  let manifest = null;
  if (opts.manifest !== null) {
    manifest = readManifestSync(opts.manifest);
    if (manifest === null && !opts.unlisted) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
        `No manifest at ${opts.manifest}: run "precompressor ${opts.root}" first, pass options.manifest with its path, ` +
        'or set options.unlisted (or manifest: false) to serve files without one', { path: opts.manifest });
    }
  }
  const state = { table: /** @type {import('./table.js').Table} */ (buildTable(manifest, lctx, 'sync')), closed: false };

  // ---- staleness: watcher events mark entries stale, then re-check them against the disk ----
  const { markStale, settled } = createStaleQueue(state);
  let reloading = false;
  const dirty = new Set();

  function onFile(abs) {
    const rel = relInside(opts.root, abs);
    if (rel === null) return;
    const files = state.table.files;
    const touched = [];
    if (rel === '*' || rel.endsWith('/*')) {
      const dir = rel.slice(0, -1);
      for (const [k, e] of files) if (k.startsWith(dir) && !k.slice(dir.length).includes('/')) touched.push(e);
    } else {
      const stem = deltaStem(rel);
      const names = [rel, ...SUFFIXES.filter((s) => rel.endsWith(s)).map((s) => rel.slice(0, -s.length)), ...(stem === null ? [] : [stem])];
      for (const name of names) {
        if (reloading) dirty.add(name);
        const e = files.get(name);
        if (e) touched.push(e);
      }
    }
    for (const e of touched) markStale(e);
  }

  const watcher = opts.watch
    ? createWatcher({ manifest: opts.manifest, onFile, onManifest: () => void reload().catch(() => {}) })
    : null;
  const dirsOf = (table) => [...table.dirs].map((d) => path.join(opts.root, ...d.split('/')));
  watcher?.update(dirsOf(state.table));

  // ---- reload: coalesced, the old table serves until the new one is checked ----
  let current = null;
  let queued = null;
  async function doReload() {
    if (opts.manifest === null) return;
    reloading = true;
    dirty.clear();
    try {
      await unlisted.refresh();
      const m = await readManifestAsync(opts.manifest);
      if (m === null && !opts.unlisted) {
        throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', `No manifest at ${opts.manifest}`, { path: opts.manifest });
      }
      const table = await buildTable(m, lctx, 'async');
      if (state.closed) return;
      state.table = table;
      for (const rel of dirty) {
        const e = table.files.get(rel);
        if (e) markStale(e);
      }
      watcher?.update(dirsOf(table));
    } finally {
      reloading = false;
      dirty.clear();
    }
  }
  /** Re-read the manifest and re-check the disk. Rejects (keeping the current table) if invalid. */
  function reload() {
    if (queued) return queued;
    if (current) {
      queued = current.catch(() => {}).then(() => {
        queued = null;
        return reload();
      });
      return queued;
    }
    current = doReload().finally(() => {
      current = null;
    });
    return current;
  }

  // ---- request handling ----
  function pass(req, res, next, status) {
    if (typeof next === 'function') {
      if (opts.fallthrough) return next();
      const err = Object.assign(new Error(status === 404 ? 'Not Found' : 'Bad Request'), { status, statusCode: status, expose: true });
      return next(err);
    }
    endWith(req, res, status);
  }

  function fail(req, res, next, err) {
    if (typeof next === 'function') return next(err);
    if (!res.headersSent) endWith(req, res, 500);
    else res.destroy();
  }

  /**
   * Open `file` (never through a final symlink), fstat it, and respond with `repOf(stat)` through
   * that descriptor, so the headers describe the bytes sent. When the file is gone or not a
   * regular file, `repOf` rejects it (null) or the fstat fails (`err`), calls `onMissing(err)`
   * instead; when the client has gone away, does nothing. Every path closes the descriptor.
   * @param {{ path: string, vary: boolean }} target
   * @param {string} file
   * @param {(st: fs.Stats) => import('./table.js').Rep | null} repOf
   * @param {(err?: Error | null) => void} onMissing
   */
  function openAndRespond(req, res, next, target, file, repOf, onMissing) {
    fs.open(file, OPEN_FLAGS, (err, fd) => {
      if (err) return GONE.has(/** @type {string} */ (err.code)) ? onMissing() : fail(req, res, next, err);
      fs.fstat(fd, (err2, st) => {
        const rep = err2 || !st.isFile() || isGone(res) ? null : repOf(st);
        if (rep === null) {
          fs.close(fd, () => {});
          return isGone(res) ? undefined : onMissing(err2);
        }
        try {
          respond(req, res, target, rep, fd, opts, st);
        } catch (e) {
          fs.close(fd, () => {});
          fail(req, res, next, e);
        }
      });
    });
  }

  /** The file at `target.file` from disk with fstat-based headers (stale entries, unlisted files). */
  function serveFromDisk(req, res, next, target, onMissing) {
    const repOf = (st) => statRep(target.file, target.type, target.vary, st, opts);
    openAndRespond(req, res, next, target, target.file, repOf, (err) => (err ? fail(req, res, next, err) : onMissing()));
  }

  function serveEntry(req, res, next, entry) {
    if (entry.stale) {
      const target = { file: entry.identity.file, path: entry.path, type: entry.type, vary: entry.vary };
      return serveFromDisk(req, res, next, target, () => pass(req, res, next, 404));
    }
    const delta = entry.deltas === null ? null : chooseDelta(req.headers, entry.deltas);
    const choice = delta === null ? neg.negotiate(req.headers['accept-encoding'], entry.mask) : delta.encoding;
    if (choice === null) {
      return endWith(req, res, 406, varyHead(res, entry));
    }
    const rep = delta ?? (choice === 'identity' ? entry.identity : entry.reps[choice]);
    if (rep.body !== null) {
      try {
        return respond(req, res, entry, rep, null, opts);
      } catch (e) {
        return fail(req, res, next, e);
      }
    }
    // streamed: the file must still be the one the table describes, else the entry turns stale
    const unchanged = (st) => st.size === rep.size && (rep.encoding !== 'identity' || st.mtimeMs === rep.mtimeMs);
    openAndRespond(req, res, next, entry, rep.file, (st) => (unchanged(st) ? rep : null), () => {
      markStale(entry);
      serveEntry(req, res, next, entry);
    });
  }

  function redirect(req, res) {
    const location = folderRedirectLocation(/** @type {any} */ (req).originalUrl ?? req.url ?? '/');
    endWith(req, res, 301, ['Location', location]);
  }

  function spaOrPass(req, res, next, p) {
    const last = p.rel.slice(p.rel.lastIndexOf('/') + 1);
    if (opts.spa !== null && !last.includes('.')) {
      const entry = state.table.files.get(opts.spa);
      if (entry) return serveEntry(req, res, next, entry);
      if (opts.unlisted) {
        const file = path.join(opts.root, ...opts.spa.split('/'));
        return serveFromDisk(req, res, next, { file, path: file, type: contentTypeOf(opts.spa), vary: false }, () => pass(req, res, next, 404));
      }
    }
    pass(req, res, next, 404);
  }

  function middleware(req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (opts.fallthrough && typeof next === 'function') return next();
      return endWith(req, res, 405, ['Allow', 'GET, HEAD']);
    }
    const p = parseRequestPath(req.url ?? '/', { windows });
    if (!p.ok) return pass(req, res, next, p.status);
    if (p.dotfile && opts.dotfiles !== 'allow') return pass(req, res, next, opts.dotfiles === 'deny' ? 403 : 404);
    const hit = resolveEntry(state.table, p, opts);
    if (hit !== null) return 'redirect' in hit ? redirect(req, res) : serveEntry(req, res, next, hit.entry);
    if (!opts.unlisted || p.rel === state.table.manifestRel) return spaOrPass(req, res, next, p);
    unlisted.find(p).then((f) => {
      if (f === null) return spaOrPass(req, res, next, p);
      if ('redirect' in f) return redirect(req, res);
      serveFromDisk(req, res, next, { file: f.real, path: f.logical, type: contentTypeOf(f.rel), vary: false }, () => spaOrPass(req, res, next, p));
    }, (err) => fail(req, res, next, err));
  }

  middleware.reload = reload;
  /** Resolves when pending re-checks (after watcher events) and reloads have finished. */
  middleware.settled = async () => {
    await current?.catch(() => {});
    await settled();
  };
  /** Stop the watchers (they never keep the process alive, but tests and servers close them). */
  middleware.close = () => {
    state.closed = true;
    watcher?.close();
  };
  /** Number of files in the current table (for diagnostics and tests). */
  middleware.size = () => state.table.files.size;
  return middleware;
}
