// The serving core's door: a plain request in, one decision out, for every adapter.

export { decide } from './core.js';
export { hotOf } from './hot.js';
/**
 * @typedef {import('../http/index.js').RequestInfo} RequestInfo
 * @typedef {import('../http/index.js').ResponseHeaders} ResponseHeaders
 */
/**
 * @template [X=any]
 * @template {RequestInfo} [Q=RequestInfo]
 * @template {ResponseHeaders} [R=ResponseHeaders]
 * @typedef {import('./core.js').Call<X, Q, R>} Call
 */
