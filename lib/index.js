export { precompress } from './compress/index.js';
export { serveStatic } from './serve/middleware.js';
export { startPreview } from './serve/preview.js';
export { watch } from './watch/watch.js';
export { PrecompressorError } from './errors.js';
