import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Full garbage collections paced by the heap's growth, for the threads of a long pass on the
 * command line: the compression thread (lib/cli/compress-thread.js) and the pool's workers. A pass
 * allocates per file; objects that live while a worker has their file outlive a young generation,
 * and V8 lets the old generation grow to several times what is live before it collects. A
 * collection once the heap holds 1.5 × what was live after the last one keeps each collection's
 * work in proportion to what was allocated since.
 */

/** How often the heap is looked at (one call, no walk of the heap). */
const EVERY_MS = 250;
/** Collect once the heap holds this many times what was live after the last collection... */
const GROWTH = 1.5;
/** ...plus this much, so that a small heap is not collected over and over. */
const SLACK = 8 * 1024 * 1024;

/** A pass of at least this many files to compress... */
const BIG_PASS = 20_000;
/** ...has each worker collect after this many files. */
const WORKER_EVERY = 512;

/**
 * After how many files a worker collects fully, for a pass of `files` files to compress; 0: never
 * by count (pure). The encoders' native memory and the buffers that outlive a young generation are
 * freed only by a full collection, and the heap's growth alone calls one too late; below BIG_PASS
 * the memory is small anyway and the CPU is not spent (figures: docs/benchmarks.md, "The CLI's cold
 * run: the pass on a thread of its own").
 * @param {number} files
 */
export function workerCollectEvery(files) {
  return files >= BIG_PASS ? WORKER_EVERY : 0;
}

/**
 * Collect now? (pure)
 * @param {number} used bytes in the heap now
 * @param {number} live bytes in the heap after the last collection
 */
export function shouldCollect(used, live) {
  return used > live * GROWTH + SLACK;
}

/**
 * V8's `gc()`: the one this context has, or (`expose`) one made available by setting the flag,
 * which also exposes it to the threads started after; null where it cannot be had.
 * @param {{ expose: boolean }} how
 * @returns {(() => void) | null}
 */
export function collector({ expose }) {
  const own = /** @type {any} */ (globalThis).gc;
  if (typeof own === 'function') return own;
  if (!expose) return null;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    return typeof gc === 'function' ? gc : null;
  } catch {
    return null;
  }
}

/**
 * Pace this thread's collections with `gc` until the returned function is called; without `gc`,
 * V8's own schedule stays.
 * @param {(() => void) | null} gc
 * @returns {() => void}
 */
export function paceCollections(gc) {
  if (gc === null) return () => {};
  const used = () => v8.getHeapStatistics().used_heap_size;
  let live = used();
  const timer = setInterval(() => {
    if (!shouldCollect(used(), live)) return;
    gc();
    live = used();
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
