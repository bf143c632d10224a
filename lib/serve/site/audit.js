import fs from 'node:fs/promises';
import { isTempPath } from '../../fs-atomic.js';
import { ENCODINGS, stemOf, suffixEncoding } from '../../encodings.js';
import { absPath, hasDotSegment } from '../../paths.js';
import { deltaStem } from '../../manifest/manifest.js';
import { MANIFEST_INDEX_SUFFIX } from '../../options.js';

/**
 * The start-up audit of a served folder: files the manifest does not list and variants of another
 * size, told once, in one message, not learnt from a 404 on `/`.
 */

/** How many names a message lists before "and N more". */
const SHOWN = 5;

/**
 * @typedef {{ rel: string, encoding: string, listed: number, found: number | null }} Mismatch
 *   a variant the manifest lists at `listed` bytes; `found` its size on disk (null: missing)
 */

/**
 * The files of `rels` that are neither listed nor internal (the manifest and its warm index included; pure).
 * @param {string[]} rels POSIX paths relative to the root
 * @param {Record<string, unknown> | ((rel: string) => boolean)} listed the manifest's files (and the site
 *   dictionary), or a test of them
 * @param {{ manifestRel: string | null, dotfiles: boolean }} o
 */
export function unlistedOf(rels, listed, o) {
  const isListed = typeof listed === 'function' ? listed : (/** @type {string} */ rel) => Object.hasOwn(listed, rel);
  return rels.filter((rel) => {
    if (isListed(rel) || rel === o.manifestRel || isTempPath(rel)) return false;
    if (o.manifestRel !== null && rel === `${o.manifestRel}${MANIFEST_INDEX_SUFFIX}`) return false; // its warm index
    if (!o.dotfiles && hasDotSegment(rel)) return false;
    const variant = suffixEncoding(rel);
    if (variant && isListed(stemOf(rel, variant))) return false;
    const stem = deltaStem(rel);
    return !(stem !== null && isListed(stem));
  }).sort(htmlFirst);
}

/** HTML first (a page missing from the manifest is a 404 on `/`), then by path. */
function htmlFirst(/** @type {string} */ a, /** @type {string} */ b) {
  const ha = /\.html?$/.test(a) ? 0 : 1;
  const hb = /\.html?$/.test(b) ? 0 : 1;
  return ha - hb || (a < b ? -1 : a > b ? 1 : 0);
}

/** `a, b, c and 4 more` */
function listOf(/** @type {string[]} */ items) {
  if (items.length <= SHOWN) return items.join(', ');
  return `${items.slice(0, SHOWN).join(', ')} and ${items.length - SHOWN} more`;
}

/**
 * The one start-up message, or null when the folder is as its manifest says (pure).
 * @param {string} root
 * @param {{ unlisted: string[], mismatched: Mismatch[], changed: string[], servesUnlisted: boolean }} found
 */
export function auditMessage(root, { unlisted, mismatched, changed, servesUnlisted }) {
  const parts = [];
  if (unlisted.length > 0) {
    const html = unlisted.filter((r) => /\.html?$/.test(r)).length;
    const are = unlisted.length === 1 ? ' is' : 's are';
    parts.push(`${unlisted.length} file${are} not in the manifest${html > 0 ? ` (${html} HTML)` : ''}: ` +
      `${listOf(unlisted)}; ${servesUnlisted ? 'they are sent uncompressed' : 'they are not served'}. ` +
      'They were written after the folder was compressed: compress it after the framework is done ' +
      '(docs/frameworks.md), or run precompressor on it again');
  }
  if (changed.length > 0) {
    const files = `${changed.length} file${changed.length === 1 ? '' : 's'}`;
    parts.push(`${files} changed since the manifest was written (${listOf(changed)}): ` +
      'sent from disk without their variants. ' +
      'Run precompressor on the folder again after the last tool that writes it');
  }
  if (mismatched.length > 0) {
    const shown = mismatched.map((m) => `${m.rel} ${m.encoding}: ${m.listed} B listed, ` +
      (m.found === null ? 'missing' : `${m.found} B on disk`));
    const does = mismatched.length === 1 ? ' does' : 's do';
    parts.push(`${mismatched.length} variant${does} not match the manifest (${listOf(shown)}); ` +
      'those files are sent without that encoding. Another tool compressed the folder after precompressor ' +
      "(adapter-node's precompress, Nitro's compressPublicAssets, a compression plugin): turn it off, " +
      "or use the framework's precompressor entry point (docs/frameworks.md)");
  }
  return parts.length === 0 ? null : `precompressor: ${root}: ${parts.join('. ')}.`;
}

/**
 * What in the folder does not match its manifest, walked one folder at a time in the background.
 * @param {string} root
 * @param {{ has(rel: string): boolean, parsed(rel: string): import('../manifest-index/index.js').Parsed | null }} index
 * @param {{ manifestRel: string | null, dotfiles: boolean, extra: Set<string>,
 *   onInvalid?: (rel: string, problem: string) => void }} o extra: listed besides files (the site dictionary)
 * @returns {Promise<{ unlisted: string[], mismatched: Mismatch[], changed: string[] }>}
 */
export async function auditFolder(root, index, o) {
  /** @type {{ unlisted: string[], mismatched: Mismatch[], changed: string[] }} */
  const found = { unlisted: [], mismatched: [], changed: [] };
  const isListed = (/** @type {string} */ rel) => o.extra.has(rel) || index.has(rel);
  const folders = [''];
  while (folders.length > 0) {
    const dir = /** @type {string} */ (folders.pop());
    const dirents = await fs.readdir(dir === '' ? root : absPath(root, dir), { withFileTypes: true }).catch(() => []);
    const names = new Set();
    for (const d of dirents) {
      const rel = dir === '' ? d.name : `${dir}/${d.name}`;
      if (d.isDirectory()) folders.push(rel);
      else if (d.isFile()) names.add(d.name);
    }
    const rels = [...names].map((n) => (dir === '' ? n : `${dir}/${n}`));
    found.unlisted.push(...unlistedOf(rels, isListed, o));
    for (const rel of rels) {
      const got = index.has(rel) ? index.parsed(rel) : null;
      if (got !== null && 'problem' in got) o.onInvalid?.(rel, got.problem);
      else if (got !== null) await auditOne(root, rel, got.entry, names, found);
    }
  }
  found.unlisted.sort(htmlFirst);
  return found;
}

/**
 * The start-up audit of a served site: the one message, or null.
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @param {import('../manifest-index/index.js').ManifestIndex} index
 * @param {(rel: string, problem: string) => void} onInvalid
 */
export async function auditSite(opts, index, onInvalid) {
  const extra = new Set(index.siteDictionary === null ? [] : [index.siteDictionary]);
  const o = { manifestRel: index.manifestRel, dotfiles: opts.dotfiles === 'allow', extra, onInvalid };
  const found = await auditFolder(opts.root, index, o);
  return auditMessage(opts.root, { ...found, servesUnlisted: opts.unlisted });
}

/**
 * One listed file present on disk: has it changed, and do its variants have the listed sizes?
 * @param {string} root
 * @param {string} rel
 * @param {import('../../manifest/manifest.js').FileEntry} e
 * @param {Set<string>} names the files of its folder
 * @param {{ mismatched: Mismatch[], changed: string[] }} found
 */
async function auditOne(root, rel, e, names, found) {
  const st = await fs.lstat(absPath(root, rel)).catch(() => null);
  if (st === null) return;
  // a moved mtime alone is no change (a copy that kept whole seconds): the first request compares the content
  if (st.size !== e.size) {
    found.changed.push(rel);
    return;
  }
  const base = rel.slice(rel.lastIndexOf('/') + 1);
  for (const { name, suffix } of ENCODINGS) {
    const v = e.variants[name];
    if (v === undefined) continue;
    const vst = names.has(base + suffix) ? await fs.lstat(absPath(root, rel) + suffix).catch(() => null) : null;
    const size = vst?.size ?? null;
    if (size !== v.size) found.mismatched.push({ rel, encoding: name, listed: v.size, found: size });
  }
}
