import v8 from 'node:v8';
import vm from 'node:vm';

// Full collections paced by the heap's growth, for a long pass's threads: V8 lets the old generation
// grow to several times what is live, as a pass's per-file objects outlive a young generation.

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
 * After how many files a worker collects fully (0: never by count): the encoders' native memory goes
 * only then, and the heap's growth calls it too late (docs/benchmarks.md, "The CLI's cold run").
 * @param {number} files
 */
export function workerCollectEvery(files) {
  return files >= BIG_PASS ? WORKER_EVERY : 0;
}

/**
 * @param {number} used bytes in the heap now
 * @param {number} live bytes in the heap after the last collection
 */
export function shouldCollect(used, live) {
  return used > live * GROWTH + SLACK;
}

/**
 * V8's `gc()`, or (`expose`) one made available by the flag, which threads started after get too.
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
 * Pace this thread's collections with `gc` until the returned function is called.
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
