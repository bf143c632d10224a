export { precompress } from './precompress.js';
export { serveStatic } from './serve.js';
export { watch } from './watch.js';
export { PrecompressorError } from './errors.js';
