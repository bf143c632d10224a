// The manifest index room's door: the manifest's bytes as the server keeps them, a line per path found by hash.

export { ManifestCompactor } from './compact.js';
/** @typedef {import('./compact.js').Compact} Compact */
export { ManifestIndex, runIndex, runIndexAsync } from './manifest-index.js';
/** @typedef {import('./manifest-index.js').Parsed} Parsed */
