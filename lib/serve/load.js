import fs from 'node:fs';
import path from 'node:path';
import { contentHash } from '../manifest.js';
import { variantPath } from '../encodings.js';
import { buildEntry, planMemory, addFolders, settingsTagOf } from './table.js';
import { isTempPath } from '../fs-atomic.js';
import { relInside, absPath, isInside } from '../paths.js';
import { deltaFilesOf } from './dictionary.js';
import { OPEN_FLAGS, realOf, realOfSync, servableReal } from './open.js';
import { MANIFEST_NAME } from '../options.js';

/**
 * Manifest + disk → table. Checks every listed file against the disk once (at startup and on each
 * reload), never per request:
 * - the file and each variant must exist and be regular files whose real path (symlinks and
 *   symlinked folders resolved) is inside the real root; otherwise the file (or the variant) is
 *   left out of the table;
 * - the original's size and mtime must match the manifest, else the entry is marked stale
 *   (served from disk with stat-based headers, identity only);
 * - a variant whose size differs from the manifest is dropped; a deploy delta too, and one whose
 *   bytes do not hash to the manifest's record (deltas are small; read once here, streamed later);
 * - representations planned for memory are read; the original's bytes must hash to the manifest's
 *   hash (then its mtime does not matter), a variant's length must match.
 * The same checks run synchronously (construction) or asynchronously (reload, re-check after a
 * watcher event) through one generator, so the two cannot drift.
 */



/**
 * The checks for one entry, as a generator of I/O requests: yields [op, path, arg], receives the
 * result. ops: 'realpath' → string | null; 'file' → { st, buf } | null: the file opened (never
 * through a final symlink, never waiting on a FIFO), fstat'd, refused unless the descriptor's own
 * real path is servable (`arg.rules`: inside the real root, not a dotfile, not the manifest), and
 * read when its size is `arg.read`. Reading and identifying through that one descriptor means a
 * folder swapped for a symlink meanwhile can neither put outside bytes in memory nor record an
 * outside file's dev/ino (which the per-request check compares against).
 * Returns the Check for buildEntry, or null when the file must not be served.
 * @param {string} rel
 * @param {import('../manifest.js').FileEntry} src
 * @param {{ root: string, realRoot: string | null, encodings: readonly string[], realDirs: Map<string, string | null>, dictionaries?: boolean, rules: { dotfiles: string, manifestReal: string | null },
 *   audit?: { mismatched: import('./audit.js').Mismatch[], changed: string[] } }} ctx audit: where the start-up check records what does not match
 * @param {string[]} memory encodings (and 'identity') to load into memory
 * @returns {Generator<Op, import('./table.js').Check | null, any>}
 */
export function* checkEntry(rel, src, ctx, memory) {
  const logical = absPath(ctx.root, rel);
  const dir = path.dirname(logical);
  let realDir = ctx.realDirs.get(dir);
  if (realDir === undefined) {
    realDir = /** @type {string | null} */ (yield ['realpath', dir, null]);
    if (realDir !== null && !isInside(ctx.realRoot, realDir)) realDir = null;
    ctx.realDirs.set(dir, realDir);
  }
  if (realDir === null) return null;
  const rules = { realRoot: ctx.realRoot, ...ctx.rules };

  /**
   * Resolve a file in that folder (read when its size is `read`); null when missing, not a
   * file, or not servable.
   * @param {string} name
   * @param {number} [read]
   * @returns {Generator<Op, { file: string, st: fs.Stats, buf: Buffer | null } | null, any>}
   */
  function* resolve(name, read = -1) {
    const file = /** @type {string | null} */ (yield ['realpath', path.join(/** @type {string} */ (realDir), name), null]);
    if (file === null || !isInside(ctx.realRoot, file)) return null;
    const got = /** @type {{ st: fs.Stats, buf: Buffer | null } | null} */ (yield ['file', file, { rules, read }]);
    return got === null ? null : { file, ...got };
  }

  const base = path.basename(logical);
  const orig = yield* resolve(base, memory.includes('identity') ? src.size : -1);
  if (orig === null) return null;
  /** @type {Record<string, Buffer>} */
  const bodies = {};
  /** @type {Record<string, { dev: number, ino: number }>} the file each representation was checked as */
  const ids = { identity: idOf(orig.st) };
  let stale = orig.st.size !== src.size;
  if (!stale && memory.includes('identity')) {
    if (orig.buf !== null && contentHash(orig.buf) === src.hash) bodies.identity = orig.buf;
    else stale = true;
  } else if (!stale) {
    stale = orig.st.mtimeMs !== src.mtimeMs;
  }
  if (stale) ctx.audit?.changed.push(rel);
  /** @type {Record<string, string>} */
  const variants = {};
  if (!stale) {
    for (const enc of ctx.encodings) {
      const v = src.variants[/** @type {'br'} */ (enc)];
      if (!v) continue;
      const found = yield* resolve(variantPath(base, enc), memory.includes(enc) ? v.size : -1);
      if (found === null || found.st.size !== v.size) {
        ctx.audit?.mismatched.push({ rel, encoding: enc, listed: v.size, found: found?.st.size ?? null });
        continue;
      }
      if (memory.includes(enc)) {
        if (found.buf === null) continue;
        bodies[enc] = found.buf;
      }
      variants[enc] = found.file;
      ids[enc] = idOf(found.st);
    }
  }
  /** @type {Record<string, string>} deploy deltas whose bytes hash to their record (a wrong one breaks the page) */
  const deltas = {};
  if (!stale && ctx.dictionaries && src.deltas) {
    for (const d of deltaFilesOf(base, src)) {
      const found = yield* resolve(d.name, d.size);
      if (found === null || found.buf === null || contentHash(found.buf) !== d.hash) continue;
      deltas[d.name] = found.file;
      ids[d.name] = idOf(found.st);
    }
  }
  return { stale, file: orig.file, variants, bodies: stale ? {} : bodies, memory, deltas, ids };
}

/** @param {{ dev: number, ino: number }} st */
function idOf(st) {
  return { dev: st.dev, ino: st.ino };
}

/**
 * A file-system step a check yields: the real path of a path, or a file opened, checked and read.
 * @typedef {['realpath', string, null] | ['file', string, { rules: Rules, read: number }]} Op
 * @typedef {{ realRoot: string | null, dotfiles: string, manifestReal: string | null }} Rules
 */

/** @param {Op} op */
function opSync([op, p, arg]) {
  if (op === 'realpath') {
    try {
      return fs.realpathSync.native(p);
    } catch {
      return null;
    }
  }
  let fd = -1;
  try {
    fd = fs.openSync(p, OPEN_FLAGS);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    const real = realOfSync(fd, p, st);
    if (real === null || !servableReal(arg.rules.realRoot, real, arg.rules)) return null;
    if (st.size !== arg.read) return { st, buf: null };
    const buf = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = fs.readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) return { st, buf: null }; // shrank while read: no body, the entry is not trusted
      n += got;
    }
    return { st, buf };
  } catch {
    return null;
  } finally {
    if (fd !== -1) fs.closeSync(fd);
  }
}

/** @param {Op} op */
async function opAsync([op, p, arg]) {
  if (op === 'realpath') return fs.promises.realpath(p).catch(() => null);
  /** @type {fs.promises.FileHandle | undefined} */
  let fh;
  try {
    fh = await fs.promises.open(p, OPEN_FLAGS);
    const st = await fh.stat();
    if (!st.isFile()) return null;
    const real = await new Promise((resolve) => realOf(/** @type {fs.promises.FileHandle} */ (fh).fd, p, st, resolve));
    if (real === null || !servableReal(arg.rules.realRoot, real, arg.rules)) return null;
    if (st.size !== arg.read) return { st, buf: null };
    const buf = Buffer.allocUnsafe(st.size);
    for (let n = 0; n < buf.length;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) return { st, buf: null }; // shrank while read, as above
      n += bytesRead;
    }
    return { st, buf };
  } catch {
    return null;
  } finally {
    await fh?.close();
  }
}

/**
 * @template T
 * @param {Generator<Op, T, any>} gen
 * @returns {T}
 */
export function runSync(gen) {
  let r = gen.next();
  while (!r.done) r = gen.next(opSync(r.value));
  return r.value;
}

/**
 * @template T
 * @param {Generator<Op, T, any>} gen
 * @returns {Promise<T>}
 */
export async function runAsync(gen) {
  let r = gen.next();
  while (!r.done) r = gen.next(await opAsync(r.value));
  return r.value;
}

/**
 * Listed paths the middleware never serves: the manifest itself and our temp files.
 * @param {string} rel
 * @param {string | null} manifestRel
 */
function servable(rel, manifestRel) {
  return rel !== manifestRel && !isTempPath(rel);
}

/**
 * The manifest the middleware never serves: its own, or with `manifest: false` the default one in
 * the root, which is ours all the same.
 * @param {Readonly<import('./options.js').ServeOptions>} opts
 */
export function manifestToHide(opts) {
  return opts.manifest ?? path.join(opts.root, MANIFEST_NAME);
}

/**
 * Real path of the root, or null while it does not exist (express.static starts all the same).
 * @param {string} root
 */
export function realRootOf(root) {
  try {
    return fs.realpathSync.native(root);
  } catch {
    return null;
  }
}

/**
 * Context shared by the table builders of one middleware. `realRoot` is null while the root does
 * not exist; a reload looks again.
 * @param {Readonly<import('./options.js').ServeOptions>} opts
 * @param {(encodings: string[]) => number} maskOf
 */
export function loadContext(opts, maskOf) {
  const manifestRel = opts.manifest === null ? null : relInside(opts.root, opts.manifest);
  return { root: opts.root, realRoot: realRootOf(opts.root), opts, maskOf, manifestRel };
}

/**
 * Build a table from a manifest (null: empty table) with the sync or async runner.
 * @param {import('../manifest.js').Manifest | null} manifest
 * @param {ReturnType<typeof loadContext>} lctx
 * @param {'sync' | 'async'} mode
 * @param {{ mismatched: import('./audit.js').Mismatch[], changed: string[] }} [audit] records what does not match (start-up)
 */
export function buildTable(manifest, lctx, mode, audit) {
  const { opts } = lctx;
  if (lctx.realRoot === null) lctx.realRoot = realRootOf(lctx.root);
  const tctx = { root: lctx.root, opts, maskOf: lctx.maskOf, settingsTag: settingsTagOf(manifest?.settings), siteDictionary: manifest?.siteDictionary?.path ?? null };
  const rules = { dotfiles: opts.dotfiles, manifestReal: realRootOf(manifestToHide(opts)) };
  const cctx = { root: lctx.root, realRoot: lctx.realRoot, encodings: opts.encodings, realDirs: new Map(), dictionaries: opts.dictionaries, rules };
  const checkCtx = audit ? { ...cctx, audit } : cctx; // the table keeps cctx: re-checks record nothing
  const files = manifest?.files ?? {};
  const plan = planMemory(files, opts);
  /** @type {import('./table.js').Table} */
  const table = { files: new Map(), dirs: new Set(['']), manifestRel: lctx.manifestRel, tctx, cctx };
  const add = (/** @type {string} */ rel, /** @type {import('./table.js').Check | null} */ check) => {
    if (check === null) return;
    table.files.set(rel, buildEntry(rel, files[rel], tctx, check));
    addFolders(table.dirs, rel);
  };
  const rels = Object.keys(files).filter((rel) => servable(rel, lctx.manifestRel));
  if (mode === 'sync') {
    for (const rel of rels) add(rel, runSync(checkEntry(rel, files[rel], checkCtx, plan.get(rel) ?? [])));
    return table;
  }
  return (async () => {
    const BATCH = 32;
    for (let i = 0; i < rels.length; i += BATCH) {
      const slice = rels.slice(i, i + BATCH);
      const checks = await Promise.all(slice.map((rel) => runAsync(checkEntry(rel, files[rel], checkCtx, plan.get(rel) ?? []))));
      slice.forEach((rel, j) => add(rel, checks[j]));
    }
    return table;
  })();
}

/**
 * Check one entry again (after a watcher event): a fresh Entry, or null when it is gone.
 * @param {import('./table.js').Table} table
 * @param {import('./table.js').Entry} entry
 */
export async function recheckEntry(table, entry) {
  const cctx = { ...table.cctx, realDirs: new Map() };
  const check = await runAsync(checkEntry(entry.rel, entry.src, cctx, entry.memory));
  return check === null ? null : buildEntry(entry.rel, entry.src, table.tctx, check);
}
