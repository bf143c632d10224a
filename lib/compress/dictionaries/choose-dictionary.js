import zlib from 'node:zlib';
import { deltaCodecOf } from '../encoders/index.js';

/**
 * The site dictionary (RFC 9842), pure: made from what the pages share, chosen among candidates by what
 * a visit costs with each (its own bytes plus VISIT_PAGES pages against it) on a sample of the pages.
 */

/** @typedef {import('../../encodings.js').DeltaEncoding} DeltaEncoding */

/** Pages of a visit after the first that the dictionary's own bytes are weighed against. */
const VISIT_PAGES = 5;
/** Smallest and largest dictionary tried (the largest also bounded by what the pages share). */
const MIN_DICTIONARY = 8 * 1024;
const MAX_DICTIONARY = 1024 * 1024;
/** Pages measured per candidate (evenly spread over the sorted list). */
const SAMPLE = 12;
/** Brotli quality for the dictionary's own size while scoring (the served variant is quality 11). */
const SCORE_BROTLI = 9;
/**
 * The previous build's dictionary is kept while its score is within this fraction of the best new
 * candidate's: returning visitors hold it already, and a new one costs each of them a download.
 */
const KEEP_MARGIN = 0.05;

/**
 * The segments of a page, cut before every `<`: a sidebar link that differs on the current page is
 * one segment, not the whole sidebar.
 * @param {Buffer} page
 * @returns {string[]}
 */
export function segmentsOf(page) {
  return page.toString('latin1').split(/(?=<)/);
}

/**
 * For each segment seen in at least two pages: in how many pages it appears.
 * @param {string[][]} pages segments of each page
 * @returns {Map<string, number>}
 */
export function sharedSegments(pages) {
  /** @type {Map<string, number>} */
  const df = new Map();
  for (const segs of pages) {
    for (const s of new Set(segs)) df.set(s, (df.get(s) ?? 0) + 1);
  }
  for (const [s, n] of df) if (n < 2) df.delete(s);
  return df;
}

/**
 * The shared skeleton of a page: its segments that at least `minPages` pages have, in order (so that
 * runs stay runs), then `extra` segments of other layouts, most shared first, up to `budget` bytes.
 * @param {string[]} page segments of the representative page
 * @param {string[][]} pages segments of every page
 * @param {Map<string, number>} df from sharedSegments()
 * @param {number} minPages
 * @param {number} budget
 * @returns {Buffer}
 */
export function skeletonDictionary(page, pages, df, minPages, budget) {
  const out = page.filter((s) => (df.get(s) ?? 0) >= minPages);
  let used = out.reduce((n, s) => n + s.length, 0);
  const have = new Set(out);
  const others = [...df]
    .filter(([s, n]) => n >= minPages && !have.has(s))
    .sort((a, b) => b[1] * b[0].length - a[1] * a[0].length);
  const added = new Set();
  for (const [s] of others) {
    if (used + s.length > budget) continue;
    added.add(s);
    used += s.length;
  }
  // Appended in the order other pages have them, so that their runs stay runs too.
  for (const segs of pages) {
    for (const s of segs) {
      if (!added.has(s)) continue;
      added.delete(s);
      out.push(s);
    }
  }
  return Buffer.from(out.join(''), 'latin1');
}

/**
 * The page whose segments are the most shared (bytes × pages sharing them): the layout's best example.
 * @param {string[][]} segs
 * @param {Map<string, number>} df
 */
function representative(segs, df) {
  let best = 0;
  let bestShared = -1;
  segs.forEach((list, i) => {
    const shared = list.reduce((/** @type {number} */ n, s) => n + s.length * (df.get(s) ?? 0), 0);
    if (shared > bestShared) [best, bestShared] = [i, shared];
  });
  return best;
}

/**
 * Bytes of `page` against `dict` for scoring, with the codec's quick options (their ranking is the same).
 * @param {DeltaEncoding} via
 * @param {Buffer} page
 * @param {Buffer} dict
 * @returns {number}
 */
function scoredSize(via, page, dict) {
  const codec = deltaCodecOf(via);
  return codec.compress(page, codec.scoreOptions(dict)).length + codec.magic.length + 32;
}

/** @param {Buffer} buf */
function brotliSize(buf) {
  const Z = zlib.constants;
  const params = {
    [Z.BROTLI_PARAM_QUALITY]: SCORE_BROTLI, [Z.BROTLI_PARAM_LGWIN]: 24, [Z.BROTLI_PARAM_MODE]: Z.BROTLI_MODE_TEXT,
  };
  return zlib.brotliCompressSync(buf, { params }).length;
}

/**
 * @typedef {{ method: 'segments' | 'page' | 'previous' | 'none', bytes: Buffer | null, size: number,
 *   ownBytes: number, pageBytes: number, baseline: number,
 *   tried: { method: string, size: number, ownBytes: number, pageBytes: number, score: number }[] }} Choice
 *   ownBytes: the dictionary's Brotli size while scoring; pageBytes: mean page bytes against it in the
 *   sample; baseline: the sample's mean best ordinary size (Brotli 11); tried: every candidate's score
 */

/**
 * Choose the site dictionary for `pages` (`best[i]`: page i's best ordinary size): 'none' when no
 * candidate makes a visit cheaper, `previous` while within KEEP_MARGIN of the best new one.
 * @param {Buffer[]} pages
 * @param {number[]} best
 * @param {DeltaEncoding} via the encoder to score with
 * @param {Buffer | null} [previous]
 * @returns {Choice}
 */
export function chooseDictionary(pages, best, via, previous = null) {
  const segs = pages.map(segmentsOf);
  const df = sharedSegments(segs);
  const sharedBytes = [...df.keys()].reduce((n, s) => n + s.length, 0);
  const step = pages.length / Math.min(SAMPLE, pages.length);
  const sample = Array.from({ length: Math.min(SAMPLE, pages.length) }, (_, i) => Math.floor(i * step));
  const baseline = sample.reduce((n, i) => n + best[i], 0) / sample.length;
  /** @type {Choice['tried']} */
  const tried = [];
  /** @param {'segments' | 'page' | 'previous'} method @param {Buffer} bytes */
  const score = (method, bytes) => {
    const ownBytes = brotliSize(bytes);
    const pageBytes = sample.reduce((n, i) => n + scoredSize(via, pages[i], bytes), 0) / sample.length;
    const t = { method, size: bytes.length, ownBytes, pageBytes, score: ownBytes + VISIT_PAGES * pageBytes };
    tried.push(t);
    return { ...t, bytes };
  };
  const candidates = [];
  if (sharedBytes > 0) {
    const rep = representative(segs, df);
    if (pages[rep].length <= MAX_DICTIONARY) candidates.push(score('page', pages[rep]));
    // Fewer pages sharing a segment, more segments: the size grows with each threshold.
    const shares = [0.9, 0.5, 0.25, 0.1, 0.03, 0];
    const thresholds = [...new Set(shares.map((f) => Math.max(2, Math.ceil(f * pages.length))))];
    let last = -1;
    for (const t of thresholds) {
      const dict = skeletonDictionary(segs[rep], segs, df, t, 0);
      if (dict.length < MIN_DICTIONARY / 2 || dict.length === last) continue;
      last = dict.length;
      candidates.push(score('segments', dict));
    }
    // The skeleton with what other layouts share, twice its size.
    const wide = skeletonDictionary(segs[rep], segs, df, 2, Math.min(MAX_DICTIONARY, 2 * last));
    if (wide.length > last) candidates.push(score('segments', wide));
  }
  let win = candidates.sort((a, b) => a.score - b.score)[0];
  if (previous !== null && win !== undefined) {
    const kept = score('previous', previous);
    if (kept.score <= win.score * (1 + KEEP_MARGIN)) win = kept;
  }
  // No dictionary at all when a visit of ordinary variants costs less.
  if (win === undefined || win.score >= VISIT_PAGES * baseline) {
    return { method: 'none', bytes: null, size: 0, ownBytes: 0, pageBytes: baseline, baseline, tried };
  }
  const method = /** @type {'segments' | 'page' | 'previous'} */ (win.method);
  const { bytes, size, ownBytes, pageBytes } = win;
  return { method, bytes, size, ownBytes, pageBytes, baseline, tried };
}
