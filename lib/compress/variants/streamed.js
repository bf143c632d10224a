import { createReadStream, createWriteStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PrecompressorError } from '../../errors.js';
import { canStream, createEncoder, zlibOptions } from '../encoders/index.js';
import { createHasher } from '../../manifest/manifest.js';
import { removeIfPresent, writeAtomicWith } from '../../fs-atomic.js';
import { cacheKey, taskStats } from '../cache/index.js';
import { takeVariantStreamed } from '../cache/index.js';
import { storeOf } from '../cache/index.js';
import { copyDecoding } from '../encoders/index.js';
import { performance } from 'node:perf_hooks';
import { variantPath } from '../../encodings.js';
import { retryWhileChanged } from '../../util/flow.js';
import { openSource, reidentify } from './source.js';

/**
 * Thin I/O around the encoders: hash a source, compress its variants (streamed from `streamThreshold`
 * bytes on), write each or remove it when not small enough.
 *
 * @typedef {{ hash: string, size: number, mtimeMs: number, out: Record<string, number | null>,
 *   cache?: ReturnType<typeof taskStats>, missing?: Array<import('../../encodings.js').Encoding> }} TaskResult
 *   `out`: per encoding, the variant's size, or null when it was not kept (not small enough);
 *   `cache`: the task's variants taken from the cache (hits) or added to it (misses, bytes written);
 *   `missing`: encodings left to do (a take from the cache only: lib/compress/pass/cache-first.js)
 */

/**
 * A read stream over an open descriptor that leaves it open (a FileHandle's stream would make its
 * close() wait forever with autoClose: false).
 * @param {import('node:fs/promises').FileHandle} fh
 */
function readStreamOf(fh) {
  return createReadStream('', { fd: fh.fd, autoClose: false, start: 0, highWaterMark: 1 << 20 });
}

/**
 * Throw (a retryable error, `changed: true`) if the file changed while it was read: its fstat
 * after the read differs from before, or from the bytes actually read.
 * @param {string} abs
 * @param {{ mtimeMs: number }} before
 * @param {{ mtimeMs: number, size: number }} after
 * @param {number} bytesRead
 */
export function assertUnchanged(abs, before, after, bytesRead) {
  if (after.mtimeMs === before.mtimeMs && after.size === bytesRead) return;
  const err = new PrecompressorError('ERR_PRECOMPRESSOR_FILE', `${abs} changed while it was being read`, { path: abs });
  throw Object.assign(err, { changed: true });
}

/**
 * Hash a file (streamed when large); with `expect`, only the file the walk found (see source.js).
 * @param {string} abs
 * @param {number} streamThreshold
 * @param {import('./source.js').Identity} [expect]
 */
export async function hashFile(abs, streamThreshold, expect) {
  const { fh, st: before } = await openSource(abs, expect);
  try {
    const hasher = createHasher();
    let size = 0;
    if (before.size < streamThreshold) {
      const buf = await fh.readFile();
      hasher.update(buf);
      size = buf.length;
    } else {
      for await (const chunk of readStreamOf(fh)) {
        hasher.update(chunk);
        size += chunk.length;
      }
    }
    const after = await fh.stat();
    assertUnchanged(abs, before, after, size);
    return { hash: hasher.digest(), size, mtimeMs: after.mtimeMs };
  } finally {
    await fh.close();
  }
}

/**
 * @typedef {{ abs: string, encodings: Array<import('../../encodings.js').Encoding>, mode: 'text' | 'font' | 'generic',
 *   brotliQuality: number, gzipLevel: number, zstdLevel?: number, zopfli?: boolean, minRatio: number,
 *   streamThreshold: number, sizeHint: number, tempDir?: string | null, rel?: string, cost?: number,
 *   cache?: { store: import('../cache/index.js').StoreDescriptor, read: boolean, markedSince?: number } | null,
 *   dev?: number, ino?: number,
 *   link?: boolean }} CompressTask
 *   rel, cost: the file (relative to the root) and the estimated cost, for progress;
 *   cache: the variant cache's store (data: a worker makes the store from it), and whether to take variants
 *   from it (not with `force`) or only add them,
 *   and since when an entry counts as marked used (lib/compress/cache/take.js);
 *   dev, ino, link: the file the walk found (see source.js), the only one read under that name
 */

/**
 * Compress `abs` with each of `encodings`: in a worker of `pool`, or a big file's single encoding
 * streamed here while holding one of the pool's slots.
 * @param {CompressTask} t
 * @param {{ run(task: CompressTask, cost?: number): Promise<TaskResult>,
 *   exclusive<T>(fn: () => Promise<T>, task?: CompressTask): Promise<T> }} pool
 * @param {number} [cost] estimated cost (see estimatedCost() in lib/compress/plan/actions.js)
 * @returns {Promise<TaskResult>}
 */
export async function compressFile(t, pool, cost) {
  const [encoding] = t.encodings;
  // zopfli and WebAssembly zstd cannot stream: they always hold the whole file.
  const streamed = t.encodings.length === 1 && t.sizeHint >= t.streamThreshold && canStream(encoding, t);
  // A file rewritten while we read it is read again (a file replaced since the walk: the one now at
  // that name, if its folder is still the tree's); a file that keeps changing is an error.
  let task = t;
  return retryWhileChanged((attempt) => {
    if (attempt > 1) task = reidentify(task);
    return streamed ? pool.exclusive(() => streamedWithCache(task, encoding), task) : pool.run(task, cost);
  }, 3);
}

/**
 * A streamed variant through the cache: the source hashed first (for the key), a miss copied into it.
 * @param {CompressTask} t
 * @param {import('../../encodings.js').Encoding} encoding
 * @returns {Promise<TaskResult>}
 */
async function streamedWithCache(t, encoding) {
  if (!t.cache) return compressStreamed(t, encoding);
  const cache = taskStats();
  const h = await hashFile(t.abs, t.streamThreshold, t);
  const key = cacheKey('variant', h.hash, [encoding, zlibOptions(encoding, { ...t, size: h.size })]);
  const target = variantPath(t.abs, encoding);
  // A cached variant is written only once it decodes to the bytes just hashed (see cache.js).
  const proves = (/** @type {NodeJS.ReadableStream} */ bytes, /** @type {any} */ out) =>
    copyDecoding(bytes, out, encoding, h);
  const at = { target, keepBelow: h.size * t.minRatio, mtime: new Date(h.mtimeMs), proves };
  const store = storeOf(t.cache.store);
  const hit = t.cache.read ? await takeVariantStreamed(store, t.cache, key, at, cache) : null;
  if (hit !== null) {
    Object.assign(cache, { hits: 1, cpuSavedMs: hit.encodeMs });
    return { hash: h.hash, size: h.size, mtimeMs: h.mtimeMs, out: { [encoding]: hit.kept }, cache };
  }
  const started = performance.now();
  const r = await compressStreamed(t, encoding);
  cache.misses = 1;
  // Only a variant of the content that was hashed (it did not change in between), and kept.
  if (r.hash === h.hash && r.out[encoding] !== null) {
    const made = {
      size: /** @type {number} */ (r.out[encoding]), sha256: /** @type {string} */ (r.outSha256),
      encodeMs: performance.now() - started,
    };
    await store.putFile(key, target, made).then(
      () => (cache.written = /** @type {number} */ (r.out[encoding])),
      (err) => (cache.error = err.message),
    );
  }
  return { ...r, cache };
}

/**
 * @param {CompressTask} t
 * @param {import('../../encodings.js').Encoding} encoding
 */
async function compressStreamed(t, encoding) {
  const target = variantPath(t.abs, encoding);
  const { fh, st: before } = await openSource(t.abs, t);
  try {
    const hasher = createHasher();
    let inSize = 0;
    let outSize = 0;
    const outHash = createHash('sha256'); // what was written, for the cache's check of its copy
    const tapIn = new Transform({
      transform(chunk, _enc, cb) {
        hasher.update(chunk);
        inSize += chunk.length;
        cb(null, chunk);
      },
    });
    const countOut = new Transform({
      transform(chunk, _enc, cb) {
        outSize += chunk.length;
        outHash.update(chunk);
        cb(null, chunk);
      },
    });
    const encoder = createEncoder(encoding, zlibOptions(encoding, { ...t, size: before.size }));
    const produce = async (/** @type {import('node:fs/promises').FileHandle} */ out) => {
      const sink = createWriteStream('', { fd: out.fd, autoClose: false });
      await pipeline(readStreamOf(fh), tapIn, encoder, countOut, sink);
      const after = await fh.stat();
      assertUnchanged(t.abs, before, after, inSize);
      return outSize < inSize * t.minRatio;
    };
    const keep = await writeAtomicWith(target, produce, { mtime: before.mtime, checkParent: true });
    if (!keep) await removeIfPresent(target);
    return {
      hash: hasher.digest(), size: inSize, mtimeMs: before.mtimeMs, out: { [encoding]: keep ? outSize : null },
      outSha256: outHash.digest('hex'),
    };
  } finally {
    await fh.close();
  }
}
