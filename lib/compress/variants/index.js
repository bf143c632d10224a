// The variants room's door: one file's variants made (read once, taken from the cache or encoded,
// proven, written), buffered on a pool worker or streamed on the main thread.

export { compressBuffered } from './buffered.js';
export { reidentify } from './source.js';
export { compressFile, hashFile } from './streamed.js';
/** @typedef {import('./streamed.js').CompressTask} CompressTask */
/** @typedef {import('./streamed.js').TaskResult} TaskResult */

/** The module the pool's workers run. */
export const WORKER_URL = new URL('./worker.js', import.meta.url);
