// The plan room's door: the walk, whose files are ours, and what each file needs (pure where it can).

export { brotliModeFor, eligibility, estimatedCost, extensionOf, sameSettings } from './actions.js';
/** @typedef {import('./actions.js').Decision} Decision */
export { decodedAgainst } from './decodes-to.js';
export { FolderPlan } from './folder.js';
export { assertManifestTarget, assertNotSystemDir } from './guards.js';
export { MTIME_SLACK_MS, recordedVariants, userFileMessage, writtenAt } from './ownership.js';
/** @typedef {import('./ownership.js').Check} Check */
export { sliceOf } from './shard.js';
export { statPaths, walk } from './walk.js';
/** @typedef {import('./walk.js').WalkEntry} WalkEntry */
/** @typedef {import('./walk.js').WalkResult} WalkResult */
