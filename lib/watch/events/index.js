// The events room's door: the folder's watcher and what it ignores, the next batch's events, the files
// still being written.

export { EventQueue } from './event-queue.js';
export { ignoredBy, isFileEvent, mustBeDirectory, openTreeWatcher } from './intake.js';
export { TreeWatcher } from './tree-watch.js';
export { UnsettledFiles } from './unsettled.js';
/** @typedef {import('./unsettled.js').FileEvent} FileEvent */
