import fs from 'node:fs';
import path from 'node:path';
import { contentHash } from '../../manifest/manifest.js';
import { variantPath } from '../../encodings.js';
import { absPath, isInside } from '../../paths.js';
import { deltaFilesOf } from './dictionary.js';
import { OPEN_FLAGS, realOf, servableReal } from '../bodies/index.js';
import { MANIFEST_NAME } from '../../options.js';

/**
 * One listed path's files checked against the disk on its first request (docs/guarantees.md): regular
 * files inside the real root, the original as listed (else stale), variants and deltas as listed (else dropped).
 */



/**
 * The checks for one entry, as a generator of I/O requests (Op): each file is opened, identified and
 * read through one descriptor whose real path must be servable, so a folder swapped for a symlink
 * cannot bring outside bytes or an outside dev/ino. Null when the file must not be served.
 * @param {string} rel
 * @param {import('../../manifest/manifest.js').FileEntry} src
 * @param {{ root: string, realRoot: string | null, encodings: readonly string[], realDirs: Map<string, string | null>,
 *   dictionaries?: boolean, rules: { dotfiles: string, manifestReal: string | null },
 *   hashes?: import('./content-hashes.js').ContentHashes }} ctx hashes: where files whose mtime alone moved are hashed
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
   * Resolve a file in that folder (read when its size is `read`); null when not servable.
   * @param {string} name
   * @param {number} [read]
   * @returns {Generator<Op, { file: string, st: fs.Stats, buf: Buffer | null } | null, any>}
   */
  function* resolve(name, read = -1) {
    const at = path.join(/** @type {string} */ (realDir), name);
    const file = /** @type {string | null} */ (yield ['realpath', at, null]);
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
  const { stale, changed } = yield* originalVerdict(orig, src, memory.includes('identity'), ctx.hashes);
  if (!stale && orig.buf !== null) bodies.identity = orig.buf;
  /** @type {Record<string, string>} */
  const variants = {};
  if (!stale) {
    for (const enc of ctx.encodings) {
      const v = src.variants[/** @type {import('../../encodings.js').Encoding} */ (enc)];
      if (!v) continue;
      const found = yield* resolve(variantPath(base, enc), memory.includes(enc) ? v.size : -1);
      if (found === null || found.st.size !== v.size) continue;
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
  const { mtimeMs } = orig.st;
  return { stale, changed, file: orig.file, variants, bodies: stale ? {} : bodies, memory, deltas, ids, mtimeMs };
}

/**
 * Is the original the file the manifest lists: its size, then its bytes when read, else its mtime,
 * else (only the mtime moved: a copy) its content hashed once. changed: hashed and unlike.
 * @param {{ file: string, st: fs.Stats, buf: Buffer | null }} orig
 * @param {import('../../manifest/manifest.js').FileEntry} src
 * @param {boolean} read its bytes were to be read (null: it shrank meanwhile)
 * @param {import('./content-hashes.js').ContentHashes} [hashes]
 * @returns {Generator<Op, { stale: boolean, changed: boolean }, any>}
 */
function* originalVerdict(orig, src, read, hashes) {
  if (orig.st.size !== src.size) return { stale: true, changed: false };
  if (read) return { stale: orig.buf === null || contentHash(orig.buf) !== src.hash, changed: false };
  if (orig.st.mtimeMs === src.mtimeMs) return { stale: false, changed: false };
  const hash = hashes ? /** @type {string | null} */ (yield ['hash', orig.file, { st: orig.st, hashes }]) : null;
  return { stale: hash !== src.hash, changed: hash !== null && hash !== src.hash };
}

/** @param {{ dev: number, ino: number }} st */
function idOf(st) {
  return { dev: st.dev, ino: st.ino };
}

/**
 * A file-system step a check yields: the real path of a path, or a file opened, checked and read.
 * @typedef {['realpath', string, null] | ['file', string, { rules: Rules, read: number }]
 *   | ['hash', string, { st: fs.Stats, hashes: import('./content-hashes.js').ContentHashes }]} Op
 * @typedef {{ realRoot: string | null, dotfiles: string, manifestReal: string | null }} Rules
 */

/** @param {Op} op */
async function opAsync([op, p, arg]) {
  if (op === 'realpath') return fs.promises.realpath(p).catch(() => null);
  if (op === 'hash') return arg.hashes.hashOf(p, arg.st);
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
 * @returns {Promise<T>}
 */
export async function runAsync(gen) {
  let r = gen.next();
  while (!r.done) r = gen.next(await opAsync(r.value));
  return r.value;
}

/**
 * The manifest the middleware never serves: its own, or with `manifest: false` the default one.
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
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
