/**
 * Pairing files named only by a hash with their previous version by content (pure): bottom-k sketches
 * of 32-byte shingles. A wrong pair only costs bytes; a floor keeps it rare.
 */

/** Sketch size: the estimate's error is about 1/√k. */
const K = 128;
const WINDOW = 32;
/** Shared share of shingles under which two files are not taken as versions of one another. */
export const MIN_SIMILARITY = 0.3;
/** At most this many earlier files are compared with each new one (the closest in size). */
export const MAX_COMPARISONS = 48;

/**
 * A murmur3 finaliser: spreads a rolling hash's bits before the smallest are kept.
 * @param {number} h
 */
function mix(h) {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The K smallest distinct mixed hashes of the file's 32-byte windows, sorted (fewer for tiny files).
 * @param {Uint8Array} data
 * @returns {Uint32Array}
 */
export function sketchOf(data) {
  const B = 0x01000193;
  let pow = 1; // B^WINDOW mod 2^32, to drop the byte leaving the window
  for (let i = 0; i < WINDOW; i++) pow = Math.imul(pow, B);
  /** @type {number[]} */
  let kept = [];
  let ceiling = 0xffffffff;
  let h = 0;
  for (let i = 0; i < data.length; i++) {
    h = (Math.imul(h, B) + data[i]) | 0;
    if (i >= WINDOW) h = (h - Math.imul(data[i - WINDOW], pow)) | 0;
    if (i < WINDOW - 1) continue;
    const v = mix(h);
    if (v > ceiling) continue;
    kept.push(v);
    if (kept.length >= 8 * K) {
      kept = [...new Set(kept)].sort((a, b) => a - b).slice(0, K);
      if (kept.length === K) ceiling = kept[K - 1];
    }
  }
  return Uint32Array.from([...new Set(kept)].sort((a, b) => a - b).slice(0, K));
}

/**
 * Estimated share of shingles two files have in common (Jaccard), from their sketches.
 * @param {Uint32Array} a
 * @param {Uint32Array} b
 */
export function similarity(a, b) {
  let i = 0;
  let j = 0;
  let both = 0;
  let seen = 0;
  while (seen < K && (i < a.length || j < b.length)) {
    const x = i < a.length ? a[i] : Infinity;
    const y = j < b.length ? b[j] : Infinity;
    if (x === y) {
      both++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
    seen++;
  }
  return seen === 0 ? 0 : both / seen;
}

/**
 * @template T
 * @typedef {{ item: T, size: number, sketch: Uint32Array }} Sketched
 */

/**
 * Pair new files with earlier files one to one, most similar first, above MIN_SIMILARITY.
 * @template N, O
 * @param {Sketched<N>[]} fresh
 * @param {Sketched<O>[]} earlier
 * @returns {{ fresh: N, earlier: O, similarity: number }[]}
 */
export function pairByContent(fresh, earlier) {
  /** @type {{ f: number, e: number, s: number }[]} */
  const scored = [];
  const bySize = earlier.map((e, i) => ({ i, size: e.size })).sort((a, b) => a.size - b.size);
  for (const [f, n] of fresh.entries()) {
    const closest = [...bySize].sort((a, b) => Math.abs(a.size - n.size) - Math.abs(b.size - n.size))
      .slice(0, MAX_COMPARISONS);
    for (const { i } of closest) {
      const s = similarity(n.sketch, earlier[i].sketch);
      if (s >= MIN_SIMILARITY) scored.push({ f, e: i, s });
    }
  }
  scored.sort((x, y) => y.s - x.s || x.f - y.f || x.e - y.e);
  const takenF = new Set();
  const takenE = new Set();
  const pairs = [];
  for (const { f, e, s } of scored) {
    if (takenF.has(f) || takenE.has(e)) continue;
    takenF.add(f);
    takenE.add(e);
    pairs.push({ fresh: fresh[f].item, earlier: earlier[e].item, similarity: s });
  }
  return pairs;
}
