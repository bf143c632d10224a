import fs from 'node:fs';
import path from 'node:path';
import { readManifest, readManifestSync, VARIANT_SUFFIX, contentHash } from '../manifest.js';
import { deltaFilesOf } from './dictionary.js';

/**
 * One listed path's files checked against the disk, on the path's first request (lib/serve/site.js)
 * and again after an event on its files, never at startup for every file:
 * - the file and each variant must exist and be regular files whose real path (symlinks and
 *   symlinked folders resolved) is inside the real root; otherwise the file (or the variant) is
 *   not served;
 * - the original's size and mtime must match the manifest, else the entry is stale (served from
 *   disk with stat-based headers, identity only);
 * - a variant whose size differs from the manifest is dropped; a deploy delta too, and one whose
 *   bytes do not hash to the manifest's record (deltas are small; read once here, streamed later).
 * Bodies are not read here: the first response sent from disk fills the body cache
 * (Site#fill(), which hashes an original's bytes against the manifest).
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
 * @returns {Promise<T>}
 */
export async function runAsync(gen) {
  let r = gen.next();
  while (!r.done) r = gen.next(await opAsync(r.value));
  return r.value;
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
