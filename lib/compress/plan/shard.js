/**
 * `--shard <i>/<n>` (pure): which files slice i of n compresses. Every machine given the same tree
 * and options computes the same slices, so n CI jobs together compress each file once, into the
 * caches; the final run then takes every variant from them.
 * The option is read by parseShard() in lib/options.js.
 */

/**
 * The files of slice `shard`, balanced by expected work: most expensive first (ties by path, so the
 * order is the same on every machine), each to the slice with the least work so far (longest
 * processing time first: each slice within one file's work of the ideal share). Returns the slice
 * and the share of the whole work it holds (1 when there is no work).
 * @template {{ rel: string }} F
 * @param {readonly F[]} files
 * @param {(file: F) => number} costOf
 * @param {import('../../options.js').Shard} shard
 * @returns {{ files: F[], work: number, share: number }}
 */
export function sliceOf(files, costOf, shard) {
  const ranked = files.map((file) => ({ file, cost: costOf(file) }))
    .sort((a, b) => b.cost - a.cost || (a.file.rel < b.file.rel ? -1 : a.file.rel > b.file.rel ? 1 : 0));
  const load = new Array(shard.count).fill(0);
  /** @type {F[]} */
  const mine = [];
  let total = 0;
  for (const { file, cost } of ranked) {
    let least = 0;
    for (let i = 1; i < load.length; i++) if (load[i] < load[least]) least = i;
    load[least] += cost;
    total += cost;
    if (least === shard.index - 1) mine.push(file);
  }
  const work = load[shard.index - 1];
  return { files: mine, work, share: total === 0 ? 1 : work / total };
}
