import { pass } from '../../compress/index.js';
import { planWalked } from '../../compress/index.js';
import { statPaths } from '../../compress/index.js';
import { removeOutputs, failureOf, cacheSummary } from '../../compress/index.js';
import { addDeltas } from '../../compress/index.js';
import { keepSiteDictionary, summaryOf } from '../../compress/index.js';
import { buildManifest, deltaStem, deltasOf, ownSiteDictionary, SCHEMA_VERSION } from '../../manifest/manifest.js';
import { ENCODING_NAMES, variantPath, suffixEncoding, stemOf } from '../../encodings.js';

/**
 * Watch mode's batch: a pass over the paths its events named and their relatives, decided as a whole
 * pass would against the manifest kept in memory; it never finds other files or chooses the site dictionary.
 *
 * @typedef {import('./manifest-records.js').ManifestRecords} ManifestRecords
 * @typedef {import('../../compress/index.js').Pass} Pass
 */

/**
 * The paths a batch looks at for the paths its events named, with their relatives (pure).
 * @param {Iterable<string>} named
 * @param {{ entry(rel: string): import('../../manifest/manifest.js').FileEntry | undefined }} records
 * @returns {Set<string>}
 */
export function batchPaths(named, records) {
  /** @type {Set<string>} */
  const out = new Set();
  /** @type {Set<string>} */
  const expanded = new Set();
  const expand = (/** @type {string} */ rel) => {
    if (expanded.has(rel)) return;
    expanded.add(rel);
    out.add(rel);
    for (const enc of ENCODING_NAMES) out.add(variantPath(rel, enc));
    for (const [, , p] of deltasOf(rel, records.entry(rel))) out.add(p);
  };
  for (let rel of named) {
    expand(rel);
    for (let stem = stemOfOutput(rel); stem !== null; stem = stemOfOutput(rel)) {
      expand(stem);
      rel = stem;
    }
  }
  return out;
}

/**
 * The file an output path belongs to (`a.js` for `a.js.br` or `a.js.<16 hex>.dcz`), or null.
 * @param {string} rel
 */
function stemOfOutput(rel) {
  const d = rel.endsWith('.dcz') || rel.endsWith('.dcb') ? deltaStem(rel) : null;
  if (d !== null) return d;
  const enc = suffixEncoding(rel);
  return enc === undefined ? null : stemOf(rel, enc);
}

/**
 * One batch; null, having done nothing, when its paths touch the site dictionary. `whole`: only a
 * whole pass can set things right. `links`: the symlinks to files, looked at in every batch (an event
 * names a link's target, not the link).
 * @param {string} dir
 * @param {object} options
 * @param {{ has(rel: string): boolean }} holdOut files still being written
 * @param {{ paths: Iterable<string>, records: ManifestRecords, links: Set<string> }} batch
 */
export async function batchPass(dir, options, holdOut, { paths, records, links }) {
  const rels = batchPaths([...paths, ...links], records);
  const sd = ownSiteDictionary(records.head);
  if (sd !== undefined && [...rels].some((rel) => rel === sd.path || stemOfOutput(rel) === sd.path)) return null;
  const state = { whole: false };
  const out = await pass(dir, options, holdOut, {}, {
    plan: async (ctx, hold) => {
      const previous = records.subset(rels);
      const found = await statPaths(ctx.opts.root, rels, { dotfiles: ctx.opts.dotfiles });
      for (const rel of rels) links.delete(rel);
      for (const f of found.files) if (f.link) links.add(f.rel);
      return planWalked(ctx, hold, previous, found);
    },
    finish: (p) => finishBatch(p, rels, records, state),
  });
  return { ...out, whole: state.whole };
}

/**
 * The last steps of a batch: removals, the pages against the site dictionary, deltas, the manifest.
 * @param {Pass} p
 * @param {Set<string>} rels
 * @param {ManifestRecords} records
 * @param {{ whole: boolean }} state
 */
async function finishBatch(p, rels, records, state) {
  await removeOutputs(p);
  const input = {
    opts: p.opts, entries: p.entries, previous: p.previous, onDisk: p.deltasOnDisk,
    report: p.report, userFiles: p.owners.user, cache: p.cache, remote: p.remote,
  };
  const sd = ownSiteDictionary(records.head);
  const dictEntry = sd === undefined ? undefined : records.entry(sd.path);
  const site = sd === undefined || dictEntry === undefined ? null : await keepSiteDictionary(input, sd, dictEntry);
  if (records.head.siteDictionary !== undefined && site === null) state.whole = true; // none, or not ours
  const keep = site?.keep ?? new Set();
  const onDisk = new Map([...input.onDisk].filter(([rel]) => !keep.has(rel)));
  const deltas = await addDeltas({ ...input, onDisk, siteApply: site?.apply });
  const generatedAt = new Date().toISOString();
  const head = { ...records.head, schema: SCHEMA_VERSION, tool: p.tool, settings: p.settings, generatedAt };
  const changed = records.apply(rels, p.entries, head) || deltas.changed || (site?.changed ?? false) ||
    p.report.changes.length > 0 || p.removals.length > 0;
  if (changed && !p.opts.dryRun) {
    try {
      await records.write(p.opts.manifest);
    } catch (err) {
      p.report.fail(failureOf(p.opts.manifest, err));
      state.whole = true; // the records are not what is on disk
    }
  }
  await p.cache.finish(p.report, { scan: false }); // a batch costs what it touches: the next whole pass evicts
  p.remote?.finish(p.report);
  // The batch's own entries: its report counts the files it looked at.
  const manifest = buildManifest({ tool: p.tool, settings: p.settings, files: p.entries });
  const held = p.decisions.map((d) => d.file.rel);
  const report = {
    ...p.report.finish(manifest),
    deltas: deltas.summary, siteDictionary: site?.summary ?? noSiteDictionary(), cache: cacheSummary(p),
  };
  return { report, held, manifest };
}

const noSiteDictionary = () => summaryOf(null, 'none');
