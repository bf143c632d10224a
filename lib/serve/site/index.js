// The site room's door: the lazy Site (its entries built on first request, checked on disk, watched) and
// the lookup of a request path.

export { chooseDelta } from './dictionary.js';
export { Site } from './site.js';
export { appendVary, contentTypeOf, resolveEntry, statRep, varyHead } from './table.js';
/** @typedef {import('./table.js').Entry} Entry */
/** @typedef {import('./table.js').Rep} Rep */
export { HotReps } from './hot-reps.js';
