// The bodies room's door: opening a file to serve it (checked on the descriptor) and the bodies kept in memory.

export { BodyCache, SMALL_BODY } from './body-cache.js';
export { Clock } from './clock.js';
/** @typedef {import('./clock.js').Ringed} Ringed */
export { OPEN_FLAGS, readWhole, realOf, servableReal } from './open.js';
