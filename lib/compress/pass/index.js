// The pass room's door: one compression pass, its steps and its report.

export { cacheSummary, failureOf, finishOutputs, removeOutputs } from './outputs.js';
export { planPass, planWalked } from './plan-step.js';
export { Pass, pass, precompress, precompressWarm, precompressWhole } from './precompress.js';
/** @typedef {import('./precompress.js').PassHooks} PassHooks */
