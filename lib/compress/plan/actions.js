import path from 'node:path';
import picomatch from 'picomatch';
import { entryOf, deltaStem } from '../../manifest/manifest.js';
import { variantPath, suffixEncoding, stemOf } from '../../encodings.js';
import { codecOf } from '../encoders/index.js';
import { recordedOurs } from './ownership.js';

/**
 * Pure decisions: which walked files are sources and which are our variants, what to do with
 * each source, and how to compress it. No disk, no clock.
 */

const TEXT_EXTENSIONS = new Set([
  'html', 'htm', 'xhtml', 'css', 'js', 'mjs', 'cjs', 'jsx', 'ts', 'tsx', 'mts', 'cts', 'json', 'jsonld', 'map',
  'svg', 'xml', 'rss', 'atom', 'txt', 'md', 'csv', 'tsv', 'yaml', 'yml', 'toml', 'webmanifest', 'ics', 'vtt',
  'srt', 'glsl', 'wgsl', 'vue', 'svelte', 'astro', 'graphql', 'gql', 'sql', 'sh', 'py', 'rb', 'php', 'less',
  'scss', 'sass', 'styl', 'hbs', 'ejs', 'pug', 'njk', 'liquid', 'ini', 'conf', 'log', 'rtf', 'tex',
]);
const FONT_EXTENSIONS = new Set(['ttf', 'otf', 'eot', 'ttc']);

/**
 * @param {string} rel
 */
export function extensionOf(rel) {
  const ext = path.posix.extname(rel);
  return ext === '' ? '' : ext.slice(1).toLowerCase();
}

/**
 * Brotli mode for a file name: 'text', 'font' or 'generic'.
 * @param {string} rel
 * @returns {'text' | 'font' | 'generic'}
 */
export function brotliModeFor(rel) {
  const ext = extensionOf(rel);
  if (TEXT_EXTENSIONS.has(ext)) return 'text';
  if (FONT_EXTENSIONS.has(ext)) return 'font';
  return 'generic';
}

/**
 * Split walked files into sources, variants and deploy deltas: `X.br` is a variant when `X` is a source,
 * a delta when `X` exists or was recorded, unless it is a file of the user's (`user`). A variant whose
 * source is gone is an orphan to delete when the previous manifest recorded it, else a source.
 * @param {import('./walk.js').WalkEntry[]} files
 * @param {string | null} manifestRel the manifest's path relative to root, if inside it
 * @param {import('../../manifest/manifest.js').Manifest | null} [previous]
 * @param {{ has(rel: string): boolean }} [user] files of the user's at our output paths
 */
export function classify(files, manifestRel, previous = null, user = new Set()) {
  const byRel = new Set(files.map((f) => f.rel));
  /** @type {Map<string, boolean>} */
  const isSource = new Map();
  /** @type {(rel: string) => boolean} */
  const sourceOf = (rel) => {
    const enc = suffixEncoding(rel);
    if (enc === undefined) return true; // most files: no variant suffix at all
    let result = isSource.get(rel);
    if (result === undefined) {
      const stem = stemOf(rel, enc);
      result = user.has(rel) || !(byRel.has(stem) && stem !== manifestRel && sourceOf(stem));
      isSource.set(rel, result);
    }
    return result;
  };
  // A variant the previous manifest recorded (with this size), whose source is gone.
  const orphan = (/** @type {import('./walk.js').WalkEntry} */ f, /** @type {string} */ enc) =>
    !byRel.has(stemOf(f.rel, enc)) && recordedOurs(f, previous);
  /** @type {string[]} */
  const orphans = [];
  /** @type {import('./walk.js').WalkEntry[]} */
  const sources = [];
  /** @type {Map<string, Map<string, number>>} */
  const variants = new Map();
  /** @type {Map<string, number>} delta files (lib/compress/dictionaries/deploy-deltas.js decides which stay) */
  const deltas = new Map();
  for (const f of files) {
    if (f.rel === manifestRel) continue;
    const stemThere = () => byRel.has(/** @type {string} */ (deltaStem(f.rel))) || recordedOurs(f, previous);
    if (!user.has(f.rel) && isDelta(f.rel, byRel, previous) && stemThere()) {
      deltas.set(f.rel, f.size);
      continue;
    }
    const enc = suffixEncoding(f.rel);
    if (enc !== undefined && orphan(f, enc)) {
      orphans.push(f.rel);
      continue;
    }
    if (enc === undefined || sourceOf(f.rel)) {
      sources.push(f);
      continue;
    }
    const stem = stemOf(f.rel, enc);
    let m = variants.get(stem);
    if (!m) variants.set(stem, (m = new Map()));
    m.set(enc, f.size);
  }
  return { sources, variants, orphans, deltas };
}

/**
 * A deploy delta (`<file>.<16 hex>.dcb|dcz`) of a file that exists, or that the previous manifest recorded.
 * @param {string} rel
 * @param {Set<string>} byRel
 * @param {import("../../manifest/manifest.js").Manifest | null} previous
 */
function isDelta(rel, byRel, previous) {
  const stem = deltaStem(rel);
  return stem !== null && (byRel.has(stem) || entryOf(previous, stem)?.deltas !== undefined);
}

/**
 * @param {{ include: readonly string[], exclude: readonly string[], skipExtensions: ReadonlySet<string>,
 *   dotfiles: boolean }} opts
 * @returns {(rel: string, size: number) => null | 'excluded' | 'compressed-format' | 'empty'}
 */
export function eligibility(opts) {
  const pmOpts = { dot: true, nocase: true };
  const included = picomatch([...opts.include], pmOpts);
  const excluded = opts.exclude.length ? picomatch([...opts.exclude], pmOpts) : () => false;
  return (rel, size) => {
    if (!included(rel) || excluded(rel)) return 'excluded';
    if (opts.skipExtensions.has(extensionOf(rel))) return 'compressed-format';
    if (size === 0) return 'empty';
    return null;
  };
}

/**
 * @param {unknown} a
 * @param {unknown} b
 */
export function sameSettings(a, b) {
  return !!a && !!b && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Do the variants on disk match exactly the ones a manifest entry records (same encodings and sizes)?
 * @param {import('../../manifest/manifest.js').FileEntry} entry
 * @param {Map<string, number> | undefined} onDisk
 */
export function variantsIntact(entry, onDisk) {
  const recorded = Object.entries(entry.variants);
  if ((onDisk?.size ?? 0) !== recorded.length) return false;
  return recorded.every(([enc, v]) => onDisk?.get(enc) === v.size);
}

/**
 * Decide what to do with each source: `hold` one still being written as the last pass left it (its
 * `prev` if that still describes its variants, else no entry and no variants); `skip` one not eligible;
 * `fresh` one as recorded; `verify` one whose stat changed (hash it); else `compress`. `blocked`: the
 * encodings it gets no variant of, a file of the user's being at that path.
 * @param {{ sources: import('./walk.js').WalkEntry[], variants: Map<string, Map<string, number>> }} classified
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 * @param {DecideContext} ctx
 * @returns {Decision[]}
 */
export function decide(classified, previous, ctx) {
  // The cache key: content hash (checked per file) + settings + tool version.
  const compatible = previous !== null && previous.tool === ctx.tool && sameSettings(previous.settings, ctx.settings);
  const reuse = !ctx.force && compatible;
  return classified.sources.map((file) => {
    const onDisk = classified.variants.get(file.rel);
    const blocked = ctx.blocked?.get(file.rel);
    const d = decideOne(file, onDisk, previous, ctx, compatible, reuse);
    return blocked ? { ...d, blocked } : d;
  });
}

/**
 * @typedef {{ settings: object, tool: string, force: boolean, eligible: ReturnType<typeof eligibility>,
 *   holdOut?: { has(rel: string): boolean }, encodings?: readonly string[],
 *   blocked?: Map<string, Set<string>> }} DecideContext
 * @typedef {import('./walk.js').WalkEntry} WalkEntry
 * @typedef {import('../../manifest/manifest.js').FileEntry} FileEntry
 * @typedef {{ file: WalkEntry, onDisk: Map<string, number> | undefined, blocked?: Set<string> } & (
 *   { action: 'hold', prev: FileEntry | undefined } |
 *   { action: 'skip', reason: 'excluded' | 'compressed-format' | 'empty' } |
 *   { action: 'compress' } | { action: 'fresh', prev: FileEntry } | { action: 'verify', prev: FileEntry })} Decision
 */

/**
 * @param {WalkEntry} file
 * @param {Map<string, number> | undefined} onDisk
 * @param {import("../../manifest/manifest.js").Manifest | null} previous
 * @param {DecideContext} ctx
 * @param {boolean} compatible
 * @param {boolean} reuse
 * @returns {Decision}
 */
function decideOne(file, onDisk, previous, ctx, compatible, reuse) {
  if (ctx.holdOut?.has(file.rel)) {
    const prev = compatible ? entryOf(previous, file.rel) : undefined;
    return { action: 'hold', file, prev: prev && variantsIntact(prev, onDisk) ? prev : undefined, onDisk };
  }
  const reason = ctx.eligible(file.rel, file.size);
  if (reason !== null) return { action: 'skip', file, reason, onDisk };
  const prev = reuse ? entryOf(previous, file.rel) : undefined;
  const skippedOtherwise = prev !== undefined && prev.skipped !== undefined && prev.skipped !== 'not-smaller';
  if (prev === undefined || !variantsIntact(prev, onDisk) || skippedOtherwise ||
    unblocked(file.rel, prev, previous, ctx)) {
    return { action: 'compress', file, onDisk };
  }
  if (prev.size === file.size && prev.mtimeMs === file.mtimeMs) return { action: 'fresh', file, prev, onDisk };
  return { action: 'verify', file, prev, onDisk };
}

/**
 * Did a file of the user's keep `rel` from having a variant that it may have now?
 * @param {string} rel
 * @param {FileEntry} prev
 * @param {import("../../manifest/manifest.js").Manifest | null} previous
 * @param {DecideContext} ctx
 */
function unblocked(rel, prev, previous, ctx) {
  const blocked = ctx.blocked?.get(rel);
  return (ctx.encodings ?? []).some((enc) => !Object.hasOwn(prev.variants, enc) && !blocked?.has(enc) &&
    entryOf(previous, variantPath(rel, enc)) !== undefined);
}

/**
 * Rough relative CPU cost of compressing `size` bytes with `encoding`, for largest-first ordering
 * and progress (the ratios: docs/benchmarks.md, "Figures behind design constants").
 * @param {number} size
 * @param {string} encoding
 * @param {{ zopfli?: boolean }} [opts]
 */
export function estimatedCost(size, encoding, opts = {}) {
  const perByte = codecOf(encoding).costPerByte(opts);
  return 2048 * perByte + size * perByte;
}
