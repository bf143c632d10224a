// The encoders room's door: each encoding's codec (make, check, stream), by name.

export { canDecode, copyDecoding, decodedOf, decodesToHash, decodesToSync } from './decode-check.js';
export {
  canStream, checkEncoders, codecOf, createEncoder, deltaCodecOf, encodeBuffer, encodeBufferSync,
  loadEncoder, zlibOptions
} from './encode.js';
export { dczMaxWindow, dczWindowLog } from './zstd.js';
