import pLimit from 'p-limit';
import { canDecode, decodesToHash } from './decode-check.js';
import { hashFile } from './compress-file.js';
import { claimsOf, blockedEncodings } from './ownership.js';

/**
 * Thin I/O around lib/compress/ownership.js: decode a file found at a variant path and compare it
 * with the file it would be the variant of. Streamed, and stopped as soon as the decoded bytes
 * outgrow the original, so that neither a big file nor a decompression bomb costs memory.
 */

/**
 * Does the file at `variantAbs` decode (as `encoding`) to exactly the bytes of `sourceAbs`?
 * False when it does not, cannot be decoded or read, or either file is gone.
 * @param {string} variantAbs
 * @param {string} encoding
 * @param {string} sourceAbs
 * @param {number} streamThreshold
 */
async function decodesTo(variantAbs, encoding, sourceAbs, streamThreshold) {
  if (!canDecode(encoding)) return false;
  const source = await hashFile(sourceAbs, streamThreshold).catch(() => null);
  return source !== null && decodesToHash(variantAbs, encoding, source);
}

/**
 * Who owns the files at our output paths: claimsOf(), then the files it could not tell from the
 * manifest are decoded and compared (a few at a time).
 * @param {import('./walk.js').WalkEntry[]} files
 * @param {string | null} manifestRel
 * @param {import('../manifest.js').Manifest | null} previous
 * @param {{ abs: (rel: string) => string, streamThreshold: number,
 *   adoptable: (stem: import('./walk.js').WalkEntry, encoding: string) => boolean }} ctx
 * @returns {Promise<{ user: Set<string>, blocked: Map<string, Set<string>> }>}
 */
export async function findOwners(files, manifestRel, previous, ctx) {
  const adoptable = (/** @type {import('./walk.js').WalkEntry} */ stem, /** @type {string} */ enc) =>
    canDecode(enc) && ctx.adoptable(stem, enc);
  const claims = claimsOf(files, manifestRel, previous, { adoptable });
  const limit = pLimit(4);
  await Promise.all(claims.check.map((c) => limit(async () => {
    if (!(await decodesTo(ctx.abs(c.rel), c.encoding, ctx.abs(c.stem), ctx.streamThreshold))) claims.user.add(c.rel);
  })));
  return { user: claims.user, blocked: blockedEncodings(claims.user) };
}
