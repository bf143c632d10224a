export { precompress } from './compress/index.js';
export { serveStatic, startPreview } from './serve/index.js';
export { watch } from './watch/index.js';
export { PrecompressorError } from './errors.js';
