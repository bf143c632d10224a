// The worker pool room's door: a pool of worker threads fed most expensive first.

export { claimBatch, createPool } from './pool.js';
