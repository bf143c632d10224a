import fs from 'node:fs';
import path from 'node:path';
import { readManifest, readManifestSync, VARIANT_SUFFIX, contentHash } from '../manifest.js';
import { buildEntry, planMemory, addFolders, settingsTagOf } from './table.js';
import { isTempPath } from '../fs-atomic.js';
import { relInside } from '../paths.js';
import { deltaFilesOf } from './dictionary.js';

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

export { readManifestSync };

export { readManifest as readManifestAsync };

/**
 * True when `p` is `root` or inside it (separator-aware: `/public-x` is not inside `/public`).
 * Nothing is inside a root that does not exist (null).
 * @param {string | null} root
 * @param {string} p
 */
export function isInside(root, p) {
  if (root === null) return false;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p === root || p.startsWith(prefix);
}

/**
 * The checks for one entry, as a generator of I/O requests: yields [op, path], receives the result.
 * ops: 'realpath' → string | null, 'stat' → fs.Stats | null (follows symlinks), 'read' → Buffer | null.
 * Returns the Check for buildEntry, or null when the file must not be served.
 * @param {string} rel
 * @param {import('../manifest.js').FileEntry} src
 * @param {{ root: string, realRoot: string | null, encodings: readonly string[], realDirs: Map<string, string | null>, dictionaries?: boolean }} ctx
 * @param {string[]} memory encodings (and 'identity') to load into memory
 * @returns {Generator<Op, import('./table.js').Check | null, any>}
 */
export function* checkEntry(rel, src, ctx, memory) {
  const logical = path.join(ctx.root, ...rel.split('/'));
  const dir = path.dirname(logical);
  let realDir = ctx.realDirs.get(dir);
  if (realDir === undefined) {
    realDir = /** @type {string | null} */ (yield ['realpath', dir]);
    if (realDir !== null && !isInside(ctx.realRoot, realDir)) realDir = null;
    ctx.realDirs.set(dir, realDir);
  }
  if (realDir === null) return null;

  /**
   * Resolve a file in that folder; null when missing, not a file, or a link out of root.
   * @param {string} name
   * @returns {Generator<Op, { file: string, st: fs.Stats } | null, any>}
   */
  function* resolve(name) {
    const file = /** @type {string | null} */ (yield ['realpath', path.join(/** @type {string} */ (realDir), name)]);
    if (file === null || !isInside(ctx.realRoot, file)) return null;
    const st = /** @type {fs.Stats | null} */ (yield ['stat', file]);
    return st !== null && st.isFile() ? { file, st } : null;
  }

  const base = path.basename(logical);
  const orig = yield* resolve(base);
  if (orig === null) return null;
  /** @type {Record<string, Buffer>} */
  const bodies = {};
  let stale = orig.st.size !== src.size;
  if (!stale && memory.includes('identity')) {
    const buf = /** @type {Buffer | null} */ (yield ['read', orig.file]);
    if (buf !== null && buf.length === src.size && contentHash(buf) === src.hash) bodies.identity = buf;
    else stale = true;
  } else if (!stale) {
    stale = orig.st.mtimeMs !== src.mtimeMs;
  }
  /** @type {Record<string, string>} */
  const variants = {};
  if (!stale) {
    for (const enc of ctx.encodings) {
      const v = src.variants[/** @type {'br'} */ (enc)];
      if (!v) continue;
      const found = yield* resolve(base + VARIANT_SUFFIX[/** @type {'br'} */ (enc)]);
      if (found === null || found.st.size !== v.size) continue;
      if (memory.includes(enc)) {
        const buf = /** @type {Buffer | null} */ (yield ['read', found.file]);
        if (buf === null || buf.length !== v.size) continue;
        bodies[enc] = buf;
      }
      variants[enc] = found.file;
    }
  }
  /** @type {Record<string, string>} deploy deltas whose bytes hash to their record (a wrong one breaks the page) */
  const deltas = {};
  if (!stale && ctx.dictionaries && src.deltas) {
    for (const d of deltaFilesOf(base, src)) {
      const found = yield* resolve(d.name);
      if (found === null || found.st.size !== d.size) continue;
      const buf = /** @type {Buffer | null} */ (yield ['read', found.file]);
      if (buf !== null && contentHash(buf) === d.hash) deltas[d.name] = found.file;
    }
  }
  return { stale, file: orig.file, variants, bodies: stale ? {} : bodies, memory, deltas };
}

/** @typedef {['realpath' | 'stat' | 'read', string]} Op a file-system step a check yields */

/** @param {Op} op */
function opSync([op, p]) {
  try {
    if (op === 'realpath') return fs.realpathSync.native(p);
    if (op === 'stat') return fs.statSync(p);
    return fs.readFileSync(p);
  } catch {
    return null;
  }
}

/** @param {Op} op */
async function opAsync([op, p]) {
  try {
    if (op === 'realpath') return await fs.promises.realpath(p);
    if (op === 'stat') return await fs.promises.stat(p);
    return await fs.promises.readFile(p);
  } catch {
    return null;
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
 */
export function buildTable(manifest, lctx, mode) {
  const { opts } = lctx;
  if (lctx.realRoot === null) lctx.realRoot = realRootOf(lctx.root);
  const tctx = { root: lctx.root, opts, maskOf: lctx.maskOf, settingsTag: settingsTagOf(manifest?.settings), siteDictionary: manifest?.siteDictionary?.path ?? null };
  const cctx = { root: lctx.root, realRoot: lctx.realRoot, encodings: opts.encodings, realDirs: new Map(), dictionaries: opts.dictionaries };
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
    for (const rel of rels) add(rel, runSync(checkEntry(rel, files[rel], cctx, plan.get(rel) ?? [])));
    return table;
  }
  return (async () => {
    const BATCH = 32;
    for (let i = 0; i < rels.length; i += BATCH) {
      const slice = rels.slice(i, i + BATCH);
      const checks = await Promise.all(slice.map((rel) => runAsync(checkEntry(rel, files[rel], cctx, plan.get(rel) ?? []))));
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
