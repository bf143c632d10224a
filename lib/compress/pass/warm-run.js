import fs from 'node:fs';
import { statIfThere, TEMP_SUFFIX } from '../../fs-atomic.js';
import { buildManifest, pathProblem, readManifest, writeManifest } from '../../manifest/manifest.js';
import { relInside } from '../../paths.js';
import { createReport } from './report.js';
import { createCacheRun } from '../cache/index.js';
import { addDeltas, addSiteDictionary } from '../dictionaries/index.js';
import { failureOf } from './outputs.js';
import { identityOf, indexPathOf, indexRelOf, readIndex, writeIndex } from './warm-index.js';

/**
 * A warm run (#31): on a folder where nothing changed since the last pass, the answer from the
 * warm index (lib/compress/pass/warm-index.js) and the folder's stat data alone: no manifest parsed, no
 * file's content read, no thread started. The folder must hold exactly what the index lists (each
 * file with its size and mtime, each variant and delta with its size and not newer than the
 * manifest) and nothing else a pass would look at; then every file is `fresh` and the pass would
 * change nothing, save what the delta and site-dictionary steps do, which run here on the entries
 * they use. Anything else (a file added, changed or gone, a temp, a symlink, an unreadable folder)
 * returns null at once, and the caller runs the whole pass.
 */

/**
 * @typedef {import('../../options.js').Options} Options
 * @typedef {import('./warm-index.js').WarmIndex} WarmIndex
 */

/**
 * The report of a warm run, or null when this is not one (run the whole pass).
 * @param {Options} opts normalized, the root on its real path
 * @param {string} tool
 * @param {object} settings
 * @returns {Promise<import('../../types.js').Report | null>}
 */
export async function warmRun(opts, tool, settings) {
  if (opts.force || opts.dryRun || opts.shard !== null || opts.cacheUrl !== null || opts.previous !== null) return null;
  const index = readIndex(opts, tool, settings);
  if (index === null) return null;
  /** @type {Map<string, number>} delta files found (path → size) */
  const deltasFound = new Map();
  if (!sameTreeOrNot(opts, index, deltasFound)) return null;
  const report = createReport(opts);
  Object.assign(report.counts, index.header.counts);
  const cache = createCacheRun(opts);
  const entries = new Map(index.used);
  const previous = { ...index.header.head, files: Object.fromEntries(index.used) };
  const input = { opts, entries, previous, onDisk: deltasFound, report, userFiles: new Set(), cache, remote: null };
  const site = await addSiteDictionary(input);
  const onDisk = new Map([...deltasFound].filter(([rel]) => !site.keep.has(rel)));
  const deltas = await addDeltas({ ...input, onDisk, siteApply: site.apply });
  const siteDictionary = site.path === null ? null : { path: site.path, hash: /** @type {string} */ (site.hash) };
  const changed = deltas.changed || site.changed;
  const manifest = changed ? await rewrite(opts, index, entries, { tool, settings, siteDictionary }, report) : null;
  await cache.finish(report);
  const finished = manifest === null
    ? report.finishWith(index.header.files, /** @type {any} */ (index.header.bytes))
    : report.finish(manifest);
  return { ...finished, deltas: deltas.summary, siteDictionary: site.summary, cache: cache.summary() };
}

/**
 * The delta steps changed entries: the manifest of the pass is the previous one with theirs, written
 * (as the whole pass would: every other file is fresh, its entry the previous one), and its index.
 * @param {Options} opts
 * @param {WarmIndex} index
 * @param {Map<string, import('../../manifest/manifest.js').FileEntry>} entries the entries the steps used, as they
 *   left them
 * @param {{ tool: string, settings: any,
 *   siteDictionary: import('../../manifest/manifest.js').SiteDictionaryEntry | null }} head
 * @param {import('./report.js').Report} report
 */
async function rewrite(opts, index, entries, head, report) {
  const previous = /** @type {import('../../manifest/manifest.js').Manifest} */ (await readManifest(opts.manifest));
  const files = new Map(Object.entries(previous.files));
  for (const [rel] of index.used) if (!entries.has(rel)) files.delete(rel);
  for (const [rel, e] of entries) files.set(rel, e);
  const manifest = buildManifest({ ...head, files });
  try {
    await writeManifest(opts.manifest, manifest);
    await writeIndex(opts, manifest, identityOf(opts.manifest));
  } catch (err) {
    report.fail(failureOf(opts.manifest, err));
  }
  return manifest;
}

/**
 * sameTree(), false when it cannot tell (an entry it cannot stat, a line of the index that does not parse).
 * @param {Options} opts
 * @param {WarmIndex} index
 * @param {Map<string, number>} deltas
 */
function sameTreeOrNot(opts, index, deltas) {
  try {
    return sameTree(opts, index, deltas);
  } catch (err) {
    // a line that does not parse: gone, so that the whole pass writes the index again
    if (err instanceof SyntaxError) fs.rmSync(indexPathOf(opts.manifest), { force: true });
    return false;
  }
}

/**
 * Does the folder hold exactly the files the index lists, as it lists them? A walk as the pass's
 * (lib/compress/plan/walk.js): a `readdir` per folder, an `lstat` per entry, dot names left out unless
 * `dotfiles`; it stops at the first difference. Fills `deltas` with the delta files found.
 * @param {Options} opts
 * @param {WarmIndex} index
 * @param {Map<string, number>} deltas
 */
function sameTree(opts, index, deltas) {
  const manifestRel = relInside(opts.root, opts.manifest);
  const ours = manifestRel === null ? [] : [manifestRel, /** @type {string} */ (indexRelOf(manifestRel))];
  let folders = 0;
  const todo = [''];
  while (todo.length > 0) {
    const dir = /** @type {string} */ (todo.pop());
    if (dir !== '' && pathProblem(dir) !== null) return false;
    const prefix = dir === '' ? '' : `${dir}/`;
    const base = `${opts.root}/${prefix}`;
    let names;
    try {
      names = fs.readdirSync(base);
    } catch {
      return false;
    }
    const listed = index.folder(dir);
    const here = ours.filter((rel) => rel.startsWith(prefix) && !rel.includes('/', prefix.length));
    let found = 0;
    for (const name of names) {
      if (name.endsWith(TEMP_SUFFIX)) return false; // a temp to sweep, or a run under way
      if (!opts.dotfiles && name.charCodeAt(0) === 46) continue; // '.': never walked
      const st = statIfThere(`${base}${name}`, true);
      if (st === undefined) return false;
      if (st.isDirectory()) {
        todo.push(`${prefix}${name}`);
        continue;
      }
      if (st.isSymbolicLink()) return false;
      if (!st.isFile()) continue; // FIFOs, sockets, devices are never sources
      if (here.length > 0 && here.includes(`${prefix}${name}`)) continue;
      if (listed === null) return false;
      const f = listed.files.get(name);
      if (f !== undefined) {
        if (st.size !== f[1] || st.mtimeMs !== f[2]) return false;
      } else {
        const kind = index.output(listed, name, st.size, st.mtimeMs);
        if (kind === null) return false;
        if (kind === 'delta') deltas.set(`${prefix}${name}`, st.size);
      }
      found++;
    }
    if (listed === null) continue;
    if (found !== listed.files.size + listed.outputs) return false;
    folders++;
  }
  return folders === index.folders.size;
}
