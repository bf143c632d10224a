export { precompress } from './precompress.js';
export { PrecompressorError } from './errors.js';
