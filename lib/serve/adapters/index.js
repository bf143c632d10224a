// The adapters room's door: serveStatic (connect, node:http) and the server of `precompressor serve`.

export { serveStatic } from './middleware.js';
export { startPreview } from './preview.js';
