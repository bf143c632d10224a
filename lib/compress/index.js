// The compressor's door: what the rest of the house (cli, watch, index.js, plugins) uses of lib/compress/.
// Its rooms, bottom up: encoders, cache, pool, variants, plan, dictionaries, pass (ARCHITECTURE.md).

export { clear, info, prune } from './cache/index.js';
export { addDeltas, keepSiteDictionary, summaryOf } from './dictionaries/index.js';
export {
  Pass, cacheSummary, failureOf, finishOutputs, pass, planPass, planWalked,
  precompress, precompressWarm, precompressWhole, removeOutputs
} from './pass/index.js';
/** @typedef {import('./pass/index.js').PassHooks} PassHooks */
export { assertManifestTarget, statPaths } from './plan/index.js';
