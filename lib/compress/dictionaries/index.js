// The dictionaries room's door: deploy deltas, the site dictionary, and the store of earlier versions.

export { addDeltas, deltasTouch, prepareDeltas } from './deploy-deltas.js';
/** @typedef {import('./deploy-deltas.js').DeltaSummary} DeltaSummary */
export { addSiteDictionary, isPage, keepSiteDictionary, summaryOf } from './site-dictionary.js';
