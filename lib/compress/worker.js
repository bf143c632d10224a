import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parentPort, threadId } from 'node:worker_threads';
import { encodeBufferSync, loadEncoder, zlibOptions } from './encode.js';
import { contentHash } from '../manifest.js';
import { removeIfPresentSync, writeAtomicSync } from '../fs-atomic.js';
import { openSourceSync } from './source.js';
import { variantPath } from '../encodings.js';
import { assertUnchanged } from './compress-file.js';
import { cacheKey, storeSync, taskStats } from './cache.js';
import { takeVariantSync } from './cache-take.js';
import { claimBatch } from './pool.js';
import { decodesToSync } from './decode-check.js';

/**
 * Worker thread: compress a batch of files per message, synchronously (read, hash,
 * encode, write the variant atomically or remove it). Sync zlib in a worker avoids the
 * main-thread round trip per output chunk that async zlib makes, and is not capped by libuv's
 * shared 4-thread pool.
 */

/**
 * Read a whole file through one descriptor (the file the walk found: see source.js), checking with
 * fstat that it did not change meanwhile.
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
 * This worker's own folder inside the run's temp folder: workers creating files in one shared
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
 * Read the file once, then write each of the task's encodings (a small file's encodings travel
 * together: one read, one hash, one message for all of them). With `t.cache`, each variant is
 * taken from the cache when it holds it (see lib/compress/cache.js), else encoded and added to it.
 * @param {import('./compress-file.js').CompressTask} t
 * @returns {import('./compress-file.js').TaskResult}
 */
export function compressBufferedSync(t) {
  const src = readStableSync(t.abs, t);
  const size = src.buf.length;
  const hash = contentHash(src.buf);
  const cache = taskStats();
  /** @type {Record<string, number | null>} */
  const out = {};
  for (const encoding of t.encodings) {
    const target = variantPath(t.abs, encoding);
    const options = zlibOptions(encoding, { ...t, size });
    const key = t.cache ? cacheKey('variant', hash, [encoding, options]) : null;
    const at = { target, keepBelow: size * t.minRatio, mtime: src.mtime, tempDir: ownTempDir(t.tempDir) };
    // A cached variant is written only once it decodes to the bytes just read (see cache.js).
    const proves = (/** @type {Buffer} */ bytes) => decodesToSync(bytes, encoding, src.buf);
    const hit = key !== null && t.cache?.read ? takeVariantSync(t.cache.dir, key, { ...at, proves }, cache) : null;
    if (hit !== null) {
      out[encoding] = hit.kept;
      cache.hits++;
      cache.cpuSavedMs += hit.encodeMs;
      continue;
    }
    const started = performance.now();
    const data = encodeBufferSync(src.buf, encoding, options);
    const encodeMs = performance.now() - started;
    const keep = data.length < at.keepBelow;
    if (keep) writeAtomicSync(target, data, { mtime: src.mtime, tempDir: at.tempDir, checkParent: true });
    else removeIfPresentSync(target);
    out[encoding] = keep ? data.length : null;
    if (key !== null && t.cache) {
      cache.misses++;
      try {
        cache.written += storeSync(t.cache.dir, key, data.length < size ? data : null, { size: data.length, encodeMs });
      } catch (err) {
        cache.error ??= /** @type {Error} */ (err).message; // the build goes on; the next one encodes it again
      }
    }
  }
  return { hash, size, mtimeMs: src.mtimeMs, out, cache };
}

/** One batch of tasks (see lib/compress/pool.js), one reply with a result or an error per task. */
parentPort?.on('message', async ({ id, tasks, claim }) => {
  if (!claimBatch(claim)) return; // taken back by the pool for an idle worker
  const results = [];
  for (const task of tasks) {
    try {
      // The WebAssembly encoders (zopfli; zstd on Node < 22.15) load once per worker, asynchronously.
      for (const encoding of task.encodings) await loadEncoder(encoding, task);
      results.push({ result: compressBufferedSync(task) });
    } catch (err) {
      const e = /** @type {any} */ (err);
      results.push({ error: { message: e.message, code: e.code, changed: !!e.changed } });
    }
  }
  parentPort?.postMessage({ id, results });
});
