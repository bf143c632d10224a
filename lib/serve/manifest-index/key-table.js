import crypto from 'node:crypto';

/**
 * An open-addressing hash table from a path to its line in the manifest's bytes
 * (lib/serve/manifest-index/manifest-index.js): a typed array of line numbers, so a million paths cost a few
 * megabytes and no string is made at start-up. The lines' hashes (hashByte() over the path's UTF-8
 * bytes) are computed where the bytes are read; a path asked for is hashed the same way.
 */

/**
 * The start of every hash: random per process, not FNV-1a's offset basis. File names can come from
 * whoever uploads them, and FNV-1a collisions chain: with a known start, 2^k names of one hash are
 * cheap to make, and each line of them probes past all the others (a server that never starts).
 */
export const FNV_SEED = crypto.randomBytes(4).readInt32LE(0);
const FNV_PRIME = 0x01000193;

/**
 * One byte into a hash: FNV-1a's step, then the high bits folded into the low ones. FNV-1a's
 * collisions chain from any start with some chance (the names of a family built from its offset
 * basis still collided under 0.76 % of random starts); the fold leaves none of 200,000.
 * @param {number} h
 * @param {number} c
 */
export function hashByte(h, c) {
  const m = Math.imul(h ^ c, FNV_PRIME);
  return m ^ (m >>> 15);
}
/** Reused for the UTF-8 bytes of a path asked for (at most 3 bytes per UTF-16 unit). */
const SCRATCH = Buffer.allocUnsafe(3 * 1024);

/**
 * The hash of `buf[start, end)` (hashByte() from FNV_SEED).
 * @param {Buffer} buf
 * @param {number} [start]
 * @param {number} [end]
 */
export function keyHash(buf, start = 0, end = buf.length) {
  let h = FNV_SEED;
  for (let i = start; i < end; i++) h = hashByte(h, buf[i]);
  return h;
}

/**
 * @typedef {{ hashes: Int32Array, keyAt(line: number): string }} Keys the lines' hashes and paths
 */

export class KeyTable {
  count = 0;

  /** @param {number} n lines to hold */
  constructor(n) {
    let cap = 16;
    while (cap < 2 * n) cap *= 2;
    this.slots = new Int32Array(cap); // line + 1; 0 is empty
    this.mask = cap - 1;
  }

  /**
   * Add `line`, whose path hashes to `h`; a later line with the same path replaces an earlier one
   * (as JSON.parse keeps the last of duplicate keys).
   * @param {number} line
   * @param {number} h
   * @param {Keys} keys
   */
  insert(line, h, keys) {
    let at = h & this.mask;
    for (let s = this.slots[at]; s !== 0; s = this.slots[at]) {
      if (keys.hashes[s - 1] === h && keys.keyAt(s - 1) === keys.keyAt(line)) {
        this.slots[at] = line + 1;
        return;
      }
      at = (at + 1) & this.mask;
    }
    this.slots[at] = line + 1;
    this.count++;
  }

  /**
   * The line of `rel`, or -1.
   * @param {string} rel
   * @param {Keys} keys
   */
  find(rel, keys) {
    const h = rel.length <= 1024 ? keyHash(SCRATCH, 0, SCRATCH.write(rel)) : keyHash(Buffer.from(rel));
    let at = h & this.mask;
    for (let s = this.slots[at]; s !== 0; s = this.slots[at]) {
      if (keys.hashes[s - 1] === h && keys.keyAt(s - 1) === rel) return s - 1;
      at = (at + 1) & this.mask;
    }
    return -1;
  }
}
