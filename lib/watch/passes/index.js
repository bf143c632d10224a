// The passes room's door: a batch's pass or a whole one (in a child process), which to run and why, and
// our own writes, which start no batch.

export { OwnOutputs, isOwnOutput } from './own-outputs.js';
export { MANY_EVENTS, WHY, eventDistrust, eventsTrusted } from './pass-choice.js';
export { PassRunner } from './pass-runner.js';
