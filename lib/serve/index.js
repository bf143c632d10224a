// The server's door: what the rest of the house (cli, index.js, plugins) uses of lib/serve/. Its rooms,
// bottom up: http, manifest-index, bodies, site, core, adapters (ARCHITECTURE.md); the fetch and Fastify
// adapters are package entry points of their own (package.json `exports`).

export { serveStatic, startPreview } from './adapters/index.js';
export { PREVIEW_LIMITS, SERVE_DEFAULTS } from './http/index.js';
/** @typedef {import('./http/index.js').SetHeaders} SetHeaders */
