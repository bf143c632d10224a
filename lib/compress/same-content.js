import { canDecode, decodesToHash } from './decode-check.js';
import { hashFile } from './compress-file.js';

/**
 * Thin I/O around lib/compress/ownership.js (the checks of lib/compress/folder-plan.js): decode a
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
