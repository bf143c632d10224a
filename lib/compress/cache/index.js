// The variant cache room's door: keys, the store interface and its folder store, taking an entry,
// the run's upkeep, and the remote cache's client and record.

export { decodeActionResult, encodeActionResult } from './action-result.js';
/** @typedef {import('./action-result.js').RemoteRecord} RemoteRecord */
export { cacheKey, taskStats } from './entry-files.js';
export { HttpCache } from './http-cache.js';
/** @typedef {import('./http-cache.js').RemoteEntries} RemoteEntries */
export { takeVariant, takeVariantStreamed } from './take.js';
/** @typedef {import('./take.js').From} From */
export { clear, createCacheRun, info, prune } from './upkeep.js';
export { storeDescriptor, storeOf } from './variant-store.js';
/** @typedef {import('./variant-store.js').StoreDescriptor} StoreDescriptor */
/** @typedef {import('./variant-store.js').VariantStore} VariantStore */
