// An independent decoder of deploy deltas (RFC 9842) for the tests: magic, SHA-256 of the
// dictionary, then a Brotli (dcb) or zstd (dcz) stream made with that dictionary.
import crypto from 'node:crypto';
import zlib from 'node:zlib';

const MAGIC_LENGTH = { dcb: 4, dcz: 8 };

/**
 * The bytes a dcb or dcz body decodes to; throws when it names another dictionary.
 * @param {'dcb' | 'dcz'} encoding
 * @param {Buffer} delta
 * @param {Buffer} dict
 */
export function decodeDelta(encoding, delta, dict) {
  const head = MAGIC_LENGTH[encoding] + 32;
  const digest = crypto.createHash('sha256').update(dict).digest();
  if (!delta.subarray(MAGIC_LENGTH[encoding], head).equals(digest)) throw new Error(`${encoding} delta was made with another dictionary`);
  const stream = delta.subarray(head);
  return encoding === 'dcb' ? zlib.brotliDecompressSync(stream, { dictionary: dict }) : zlib.zstdDecompressSync(stream, { dictionary: dict });
}
