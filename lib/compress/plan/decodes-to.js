import { canDecode, decodedOf, decodesToHash } from '../encoders/index.js';
import { hashFile } from '../variants/index.js';

/**
 * Thin I/O around lib/compress/plan/ownership.js (the checks of lib/compress/plan/folder.js): decode a
 * file found at a variant path and compare it with the file it would be the variant of. Streamed,
 * and stopped as soon as the decoded bytes outgrow the original, so that neither a big file nor a
 * decompression bomb costs memory.
 */

/**
 * Does the file at `variantAbs` decode (as `encoding`) to exactly the bytes of `sourceAbs`?
 * False when it does not, cannot be decoded or read, or either file is gone.
 * @param {string} variantAbs
 * @param {string} encoding
 * @param {string} sourceAbs
 * @param {number} streamThreshold
 */
export async function decodesTo(variantAbs, encoding, sourceAbs, streamThreshold) {
  if (!canDecode(encoding)) return false;
  const source = await hashFile(sourceAbs, streamThreshold).catch(() => null);
  return source !== null && decodesToHash(variantAbs, encoding, source);
}

/**
 * What the file at `variantAbs` decodes to, as `encoding`, against its source at `sourceAbs`:
 * `same` when exactly the source's bytes; else what it decodes to (size and content hash, when
 * within `maxOther` bytes), for the records to tell whether it is a variant we made of another
 * content (lib/compress/plan/ownership.js). Null when either cannot be read, or it cannot be decoded.
 * @param {string} variantAbs
 * @param {string} encoding
 * @param {string} sourceAbs
 * @param {number} streamThreshold
 * @param {number} maxOther
 * @returns {Promise<{ same: boolean, decoded: { size: number, hash: string } } | null>}
 */
export async function decodedAgainst(variantAbs, encoding, sourceAbs, streamThreshold, maxOther) {
  if (!canDecode(encoding)) return null;
  const source = await hashFile(sourceAbs, streamThreshold).catch(() => null);
  if (source === null) return null;
  const decoded = await decodedOf(variantAbs, encoding, Math.max(source.size, maxOther));
  return decoded === null ? null : { same: decoded.size === source.size && decoded.hash === source.hash, decoded };
}
