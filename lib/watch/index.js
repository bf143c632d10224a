// Watch mode's door: what the cli and index.js use of lib/watch/. Its rooms: events (the folder's watcher,
// the batches of events, the files still being written) and passes (a batch's pass or a whole one).

export { watch } from './watch.js';
