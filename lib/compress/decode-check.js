import zlib from 'node:zlib';
import { createReadStream } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHasher } from '../manifest.js';
import { decodeBufferSync } from './encode.js';

/**
 * Proof that a variant holds its source: it decodes to exactly the source's bytes. Used wherever a
 * variant was not just made by our encoder (one found on disk, one taken from the variant cache,
 * which whoever can write its folder could have replaced). Decoding is bounded by the source's size,
 * so a decompression bomb costs neither memory nor time.
 */

const Zx = /** @type {any} */ (zlib);

/**
 * A streaming decoder for `encoding`, or null when this Node has none (zstd before Node 22.15).
 * @param {string} encoding
 */
function createDecoder(encoding) {
  if (encoding === 'br') return zlib.createBrotliDecompress();
  if (encoding === 'gzip') return zlib.createGunzip();
  return typeof Zx.createZstdDecompress === 'function' ? Zx.createZstdDecompress() : null;
}

/**
 * Can this Node decode `encoding` as a stream?
 * @param {string} encoding
 */
export function canDecode(encoding) {
  return encoding !== 'zstd' || typeof Zx.createZstdDecompress === 'function';
}

/**
 * Does `variant` decode (as `encoding`) to exactly `source`? False when it does not or cannot be decoded.
 * @param {Buffer} variant
 * @param {string} encoding
 * @param {Buffer} source
 */
export function decodesToSync(variant, encoding, source) {
  try {
    return decodeBufferSync(variant, /** @type {any} */ (encoding), source.length + 1).equals(source);
  } catch {
    return false;
  }
}

/**
 * Does the file `variantAbs` decode (as `encoding`) to `size` bytes whose content hash is `hash`
 * (contentHash())? Streamed: neither file is held in memory. False when it does not, cannot be
 * decoded or read.
 * @param {string} variantAbs
 * @param {string} encoding
 * @param {{ size: number, hash: string }} source
 */
export async function decodesToHash(variantAbs, encoding, source) {
  const decoder = createDecoder(encoding);
  if (decoder === null) return false;
  const hasher = createHasher();
  let size = 0;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      size += chunk.length;
      if (size > source.size) return cb(new Error('decodes to more bytes than the original'));
      hasher.update(chunk);
      cb();
    },
  });
  try {
    await pipeline(createReadStream(variantAbs, { highWaterMark: 1 << 20 }), decoder, sink);
    return size === source.size && hasher.digest() === source.hash;
  } catch {
    return false;
  }
}
