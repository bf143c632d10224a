import { createReadStream, createWriteStream } from 'node:fs';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHasher } from '../../manifest/manifest.js';
import { decodeBufferSync } from './encode.js';
import { codecOf } from './encode.js';

/**
 * Proof that a variant we did not just make holds its source: it decodes to exactly its bytes,
 * decoding bounded by the source's size (a decompression bomb costs nothing).
 */

/**
 * @param {string} encoding
 */
export function canDecode(encoding) {
  return codecOf(encoding).createDecoder !== null;
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
 * A sink that decodes what it is given (as `encoding`) and hashes the output, failing as soon as it
 * exceeds `maxSize` bytes; `result()` resolves to { size, hash } once the input has ended.
 * @param {string} encoding
 * @param {number} maxSize
 */
function decodingHasher(encoding, maxSize) {
  const decoder = codecOf(encoding).createDecoder?.() ?? null;
  if (decoder === null) return null;
  const hasher = createHasher();
  let size = 0;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      size += chunk.length;
      if (size > maxSize) return cb(new Error('decodes to more bytes than the original'));
      hasher.update(chunk);
      cb();
    },
  });
  return { decoder, sink, result: () => ({ size, hash: hasher.digest() }) };
}

/**
 * Copy `bytes` (a variant) to `out` and decode them on the way: true when they decode to exactly
 * `source` (its size and content hash). One read of the variant for both.
 * @param {NodeJS.ReadableStream} bytes
 * @param {import('node:fs/promises').FileHandle} out
 * @param {string} encoding
 * @param {{ size: number, hash: string }} source
 */
export async function copyDecoding(bytes, out, encoding, source) {
  const d = decodingHasher(encoding, source.size);
  if (d === null) return false;
  const decoded = pipeline(d.decoder, d.sink);
  const tee = new Transform({
    transform(chunk, _enc, cb) {
      if (d.decoder.write(chunk)) cb(null, chunk);
      else d.decoder.once('drain', () => cb(null, chunk));
    },
    flush(cb) {
      d.decoder.end();
      cb();
    },
  });
  try {
    await Promise.all([pipeline(bytes, tee, createWriteStream('', { fd: out.fd, autoClose: false })), decoded]);
  } catch {
    d.decoder.destroy();
    return false;
  }
  const r = d.result();
  return r.size === source.size && r.hash === source.hash;
}

/**
 * Does the file `variantAbs` decode to `size` bytes of content hash `hash` (streamed)?
 * @param {string} variantAbs
 * @param {string} encoding
 * @param {{ size: number, hash: string }} source
 */
export async function decodesToHash(variantAbs, encoding, source) {
  const r = await decodedOf(variantAbs, encoding, source.size);
  return r !== null && r.size === source.size && r.hash === source.hash;
}

/**
 * The size and content hash of what the file `variantAbs` decodes to, up to `maxSize` bytes; else null.
 * @param {string} variantAbs
 * @param {string} encoding
 * @param {number} maxSize
 * @returns {Promise<{ size: number, hash: string } | null>}
 */
export async function decodedOf(variantAbs, encoding, maxSize) {
  const d = decodingHasher(encoding, maxSize);
  if (d === null) return null;
  try {
    await pipeline(createReadStream(variantAbs, { highWaterMark: 1 << 20 }), d.decoder, d.sink);
  } catch {
    return null;
  }
  return d.result();
}
