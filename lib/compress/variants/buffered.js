import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import { encodeBuffer, encodeBufferSync, loadEncoder, zlibOptions } from '../encoders/index.js';
import { contentHash } from '../../manifest/manifest.js';
import { removeIfPresentSync, writeAtomicSync } from '../../fs-atomic.js';
import { openSourceSync } from './source.js';
import { variantPath } from '../../encodings.js';
import { assertUnchanged } from './streamed.js';
import { cacheKey, taskStats } from '../cache/index.js';
import { takeVariant } from '../cache/index.js';
import { storeOf } from '../cache/index.js';
import { decodesToSync } from '../encoders/index.js';
import { inHeldFolderOnce } from '../../held-folder.js';

/**
 * A file compressed in memory, in a worker or (its variants all in the cache) on the main thread: read
 * once, hashed, each encoding taken from the cache or encoded, then written or removed.
 */

/**
 * Read a whole file through one descriptor, checking with fstat that it did not change meanwhile.
 * @param {string} abs
 * @param {import('./source.js').Identity} expect
 */
function readStableSync(abs, expect) {
  const { fd, st: before } = openSourceSync(abs, expect);
  try {
    // Read the size fstat gave (readFileSync would fstat again and read once more to see EOF):
    // a file that grew or shrank meanwhile has another size at the second fstat.
    const whole = Buffer.allocUnsafe(before.size);
    let n = 0;
    while (n < whole.length) {
      const r = fs.readSync(fd, whole, n, whole.length - n, n);
      if (r === 0) break;
      n += r;
    }
    const buf = n === whole.length ? whole : whole.subarray(0, n);
    const after = fs.fstatSync(fd);
    assertUnchanged(abs, before, after, buf.length);
    return { buf, mtimeMs: after.mtimeMs, mtime: after.mtime };
  } finally {
    fs.closeSync(fd);
  }
}

/** @type {Map<string, string>} */
const ownTemp = new Map();

/**
 * This thread's own folder inside the run's temp folder: threads creating files in one shared
 * folder wait on its lock in the kernel (docs/benchmarks.md, "Figures behind design constants").
 * @param {string | null | undefined} runTemp
 */
function ownTempDir(runTemp) {
  if (!runTemp) return null;
  let dir = ownTemp.get(runTemp);
  if (dir === undefined) {
    dir = path.join(runTemp, `w${threadId}`);
    fs.mkdirSync(dir, { recursive: true });
    ownTemp.set(runTemp, dir);
  }
  return dir;
}

/**
 * Encode `buf` and write or remove the variant, and add it to the cache's store under `key`.
 * @param {Buffer} buf
 * @param {string | null} key
 * @param {{ encoding: import('../../encodings.js').Encoding, options: any, target: string, keepBelow: number,
 *   mtime: Date, tempDir: string | null, offThread?: boolean }} at
 *   offThread: zlib on libuv's pool (a pass done on the planning thread)
 * @param {import('../cache/index.js').VariantStore | null} store
 * @param {ReturnType<typeof taskStats>} stats
 * @returns {Promise<number | null>} the variant's size, or null when not kept
 */
async function encodeOne(buf, key, at, store, stats) {
  const started = performance.now();
  const data = at.offThread
    ? await encodeBuffer(buf, at.encoding, at.options)
    : encodeBufferSync(buf, at.encoding, at.options);
  const encodeMs = performance.now() - started;
  const keep = data.length < at.keepBelow;
  if (keep) writeAtomicSync(at.target, data, { mtime: at.mtime, tempDir: at.tempDir, checkParent: true });
  else removeIfPresentSync(at.target);
  if (key !== null && store !== null) {
    stats.misses++;
    try {
      const bytes = data.length < buf.length ? data : null;
      stats.written += await store.put(key, bytes, { size: data.length, encodeMs });
    } catch (err) {
      stats.error ??= /** @type {Error} */ (err).message; // the build goes on; the next one encodes it again
    }
  }
  return keep ? data.length : null;
}

/**
 * @typedef {{ encoding: import('../../encodings.js').Encoding, options: any, key: string | null }} Way
 *   an encoding of the file, its encoder options and its cache key (null: no cache), made once per file
 */

/**
 * Take each of `ways` that the cache holds, proven against `src`, into `out`, writing them
 * through the file's folder held open once (one check for all its variants): the ways it lacks.
 * @param {import('./streamed.js').CompressTask} t
 * @param {{ buf: Buffer, mtime: Date }} src
 * @param {Way[]} ways
 * @param {import('../cache/index.js').VariantStore} store
 * @param {ReturnType<typeof taskStats>} stats
 * @param {Record<string, number | null>} out
 * @returns {Promise<Way[]>}
 */
function takeCached(t, src, ways, store, stats, out) {
  const from = /** @type {NonNullable<typeof t.cache>} */ (t.cache);
  const size = src.buf.length;
  return inHeldFolderOnce(path.dirname(t.abs), async (dir, held) => {
    /** @type {Way[]} */
    const missing = [];
    for (const way of ways) {
      const { encoding } = way;
      const key = /** @type {string} */ (way.key);
      const target = path.join(dir, path.basename(variantPath(t.abs, encoding)));
      // A cached variant is written only once it decodes to the bytes just read (see take.js).
      const at = {
        target, held, keepBelow: size * t.minRatio, mtime: src.mtime, tempDir: ownTempDir(t.tempDir),
        proves: (/** @type {Buffer} */ bytes) => decodesToSync(bytes, encoding, src.buf),
      };
      const hit = await takeVariant(store, from, key, at, stats);
      if (hit === null) {
        missing.push(way);
        continue;
      }
      out[encoding] = hit.kept;
      stats.hits++;
      stats.cpuSavedMs += hit.encodeMs;
    }
    return missing;
  });
}

/**
 * Read the file once, then write each of the task's encodings, from the cache or encoded and added to
 * it; with `cachedOnly`, those the cache cannot give are left in `missing`; with `offThread`, zlib runs
 * on libuv's pool, so that the files of a pass on the planning thread share the cores.
 * @param {import('./streamed.js').CompressTask} t
 * @param {{ cachedOnly?: boolean, offThread?: boolean }} [how]
 * @returns {Promise<import('./streamed.js').TaskResult>}
 */
export async function compressBuffered(t, how = {}) {
  // The WebAssembly encoders (zopfli; zstd on Node < 22.15) load once per thread, asynchronously:
  // here, as this runs on a worker or on the planning thread (a small pass, lib/compress/pass/cache-first.js).
  for (const encoding of t.encodings) await loadEncoder(encoding, t);
  const src = readStableSync(t.abs, t);
  const size = src.buf.length;
  const hash = contentHash(src.buf);
  const cache = taskStats();
  /** @type {Record<string, number | null>} */
  const out = {};
  const store = t.cache ? storeOf(t.cache.store) : null;
  /** @type {Way[]} the options and key of each, for the take from the cache and the encode alike */
  const ways = t.encodings.map((encoding) => {
    const options = zlibOptions(encoding, { ...t, size });
    return { encoding, options, key: store !== null ? cacheKey('variant', hash, [encoding, options]) : null };
  });
  const left = store !== null && t.cache?.read ? await takeCached(t, src, ways, store, cache, out) : ways;
  /** @type {Array<import('../../encodings.js').Encoding>} */
  const missing = [];
  for (const { encoding, options, key } of left) {
    if (how.cachedOnly) {
      missing.push(encoding);
      continue;
    }
    const at = {
      target: variantPath(t.abs, encoding), keepBelow: size * t.minRatio, mtime: src.mtime,
      tempDir: ownTempDir(t.tempDir), encoding, options, offThread: how.offThread,
    };
    out[encoding] = await encodeOne(src.buf, key, at, store, cache);
  }
  return { hash, size, mtimeMs: src.mtimeMs, out, cache, ...(missing.length > 0 ? { missing } : {}) };
}
