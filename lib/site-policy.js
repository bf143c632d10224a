import path from 'node:path';
import { createRequire } from 'node:module';
import { MANIFEST_INDEX_SUFFIX, MANIFEST_NAME } from './options.js';
import { TEMP_SUFFIX, isTempPath } from './fs-atomic.js';
import { ENCODINGS } from './encodings.js';

// What a built site's names mean, for every server of it (serveStatic, the nginx and Caddy configurations):
// which file answers a URL, what is internal and never served by name, which names are hashed.

// ---- which file answers a URL ----

/**
 * The order in which a URL without a trailing slash is looked up (express.static's): a `folder` is a
 * redirect to its URL with a slash; `extensions` only for a path without one, as send does.
 * @typedef {'file' | 'folder' | 'extensions'} LookupStep
 * @type {readonly LookupStep[]}
 */
export const LOOKUP_ORDER = Object.freeze(/** @type {LookupStep[]} */ (['file', 'folder', 'extensions']));

/**
 * The hosts' order (Netlify, Vercel, Cloudflare Pages): `/about` is `about.html` before the folder
 * `about/` (a Next.js export writes both), for `precompressor serve` and serveStatic's `extensionsFirst`.
 * @type {readonly LookupStep[]}
 */
export const EXTENSIONS_FIRST_ORDER = Object.freeze(/** @type {LookupStep[]} */ (['file', 'extensions', 'folder']));

/** @param {boolean} extensionsFirst */
export function lookupOrder(extensionsFirst) {
  return extensionsFirst ? EXTENSIONS_FIRST_ORDER : LOOKUP_ORDER;
}

/** The index file of a folder URL (serveStatic's default `index`, and the generated configurations'). */
export const INDEX_FILES = Object.freeze(['index.html']);

/** The extensions tried for a path without one by `precompressor serve` and the generated configurations. */
export const PREVIEW_EXTENSIONS = Object.freeze(['html']);

/** @param {string} rel a file's original name */
export function contentTypeOf(rel) {
  return mimeTypes().contentType(path.posix.extname(rel)) || 'application/octet-stream';
}

/** @type {typeof import('mime-types') | undefined} */
let mime;
/** mime-types on first use: its database costs every build that only compresses a few ms to load. */
function mimeTypes() {
  return (mime ??= createRequire(import.meta.url)('mime-types'));
}

// ---- what is internal ----

const escapeRe = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The names never served as they are, as regular expressions over a site path. `always`: even a file
 * the manifest lists; otherwise a listed file of that name is the user's (their `data.tar.gz`) and served.
 * `index`: the manifest's warm index (lib/compress/pass/warm-index.js).
 * @typedef {'manifest' | 'temp' | 'variant' | 'delta' | 'index' | 'dotfile'} InternalKind
 * @typedef {{ kind: InternalKind, source: string, always: boolean }} InternalName
 * @type {readonly Readonly<InternalName>[]}
 */
export const INTERNAL_NAMES = Object.freeze(/** @type {InternalName[]} */ ([
  { kind: 'manifest', source: `^${escapeRe(MANIFEST_NAME)}$`, always: true },
  { kind: 'temp', source: `${escapeRe(TEMP_SUFFIX)}(?:/|$)`, always: true },
  { kind: 'variant', source: `(?:${ENCODINGS.map((e) => escapeRe(e.suffix)).join('|')})$`, always: false },
  { kind: 'delta', source: '\\.[0-9a-f]{16}\\.dc[bz]$', always: false },
  { kind: 'index', source: `${escapeRe(MANIFEST_INDEX_SUFFIX)}$`, always: false },
  { kind: 'dotfile', source: '(?:^|/)\\.', always: false },
]).map((r) => Object.freeze(r)));

/**
 * Is `rel` internal whatever the manifest lists (the `always` kinds above)?
 * @param {string} rel
 * @param {string | null} manifestRel the manifest's path in the site, null when outside it
 */
export function isAlwaysInternal(rel, manifestRel) {
  return rel === manifestRel || isTempPath(rel);
}

const INTERNAL_RES = INTERNAL_NAMES.map((r) => ({ ...r, re: new RegExp(r.source) }));

/**
 * Why `rel` is never served by name, or null when it may be.
 * @param {string} rel a site path
 * @param {{ listed?: boolean, manifestRel?: string | null, dotfiles?: boolean }} [o] `listed`: the manifest
 *   lists it as a file; `dotfiles`: served (`dotfiles: 'allow'`)
 * @returns {InternalKind | null}
 */
export function internalKind(rel, { listed = false, manifestRel = MANIFEST_NAME, dotfiles = false } = {}) {
  if (rel === manifestRel) return 'manifest';
  for (const r of INTERNAL_RES) {
    if (r.kind === 'manifest' || (r.kind === 'dotfile' && dotfiles) || (listed && !r.always)) continue;
    if (r.re.test(rel)) return r.kind;
  }
  return null;
}

// ---- which names are hashed ----

/**
 * Are responses of this file immutable? Those of a hashed name (`hashed`, or in the `dictionary`
 * record of manifests before `hashed`).
 * @param {{ hashed?: true, dictionary?: { hashed: boolean } }} entry a manifest entry
 */
export function isImmutable(entry) {
  return entry.hashed === true || entry.dictionary?.hashed === true;
}

/**
 * Folders whose every file is immutable whatever its name: a build id in the path (Next.js's).
 * @type {readonly string[]}
 */
export const IMMUTABLE_FOLDERS = Object.freeze(['_next/static/']);

/** @param {string} rel */
export function inImmutableFolder(rel) {
  return IMMUTABLE_FOLDERS.some((f) => rel.startsWith(f));
}

/**
 * Does a browser keep a response with this Cache-Control as a dictionary? Only a fresh one; without
 * the header, heuristic freshness may keep it.
 * @param {string | null} cacheControl
 */
export function keptAsDictionary(cacheControl) {
  if (cacheControl === null) return true;
  if (/(?:^|[\s,])no-store/.test(cacheControl)) return false;
  const m = /(?:^|[\s,])max-age=(\d+)/.exec(cacheControl);
  return m === null || Number(m[1]) > 0;
}

/**
 * RFC 8941 sf-string (the patterns are ASCII).
 * @param {string} s
 */
function sfString(s) {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `Use-As-Dictionary` value of a dictionary record; `match` is relative to the file's URL, so it
 * holds wherever the folder is mounted.
 * @param {import('./manifest/manifest.js').DictionaryEntry} d
 */
export function useAsDictionary(d) {
  return `match=${sfString(d.match)}${d.dest ? `, match-dest=(${sfString(d.dest)})` : ''}`;
}

/** Cache-Control of the responses of an immutable file (browsers store only fresh dictionaries). */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** The fetch destination (`match-dest`) of a dictionary by extension; others match every destination. */
/** @type {Record<string, string>} */
const DESTINATIONS = { js: 'script', mjs: 'script', cjs: 'script', css: 'style', html: 'document', htm: 'document' };

const hashChars = /^[A-Za-z0-9_-]+$/;

/** Words (lowercase or Capitalised) and numbers between `-` and `_`, one word at least: `jquery-3-7-1`, `Ch_12`. */
const WORDS_AND_NUMBERS = /^(?:[A-Z]?[a-z]+|[0-9]+)(?:[-_](?:[A-Z]?[a-z]+|[0-9]+))*$/;
/** Digits alone stay a hash: one webpack 8-hex-digit hash in 43 has no letter. @param {string} s */
const wordsAndNumbers = (s) => /[a-z]/i.test(s) && WORDS_AND_NUMBERS.test(s);

/** A page's name is its address: no default rule takes a hash out of it (a stale page would be kept a year). */
const PAGES = new Set(['.html', '.htm']);

/**
 * Does a run of hash characters look like a content hash rather than a word? A digit says so. Without
 * one (one Rollup hash in five), only 8 characters with a capital, `-` or `_`, and not a word
 * (`Settings`): the rare hash of that shape is missed, never a word taken.
 * @param {string} s
 */
function hashLike(s) {
  if (!hashChars.test(s) || s.length < 8 || s.length > 64 || wordsAndNumbers(s)) return false;
  if (/[0-9]/.test(s)) return true;
  return s.length === 8 && /[A-Z_-]/.test(s) && !/^[A-Z]?[a-z]+$/.test(s);
}

/**
 * Where the content hash is in a base name by the default rule: the last hash-like dot segment
 * (webpack, Parcel, Astro), else Turbopack's hash, else `-[hash]` (Vite, esbuild), else a name that is only a hash.
 * @param {string} stem base name without its extension
 * @returns {[number, number] | null}
 */
function defaultHashSpan(stem) {
  const segments = stem.split('.');
  for (let i = segments.length - 1; i >= 1; i--) {
    if (hashLike(segments[i])) {
      const start = segments.slice(0, i).join('.').length + 1;
      return [start, start + segments[i].length];
    }
  }
  // Turbopack's 13 characters (a 64-bit hash: a leading digit), whose own `-` is no name's end
  const turbo = /^(?:(.+)-)?([0-9][0-9a-z_-]{12})$/.exec(stem);
  if (turbo && !wordsAndNumbers(turbo[2])) return [turbo[1] === undefined ? 0 : turbo[1].length + 1, stem.length];
  const hex = /^(.+)-([0-9a-f]{8,64})$/.exec(stem);
  if (hex && /[0-9]/.test(hex[2])) return [hex[1].length + 1, stem.length];
  const eight = /^(.+)-([A-Za-z0-9_-]{8})$/.exec(stem);
  if (eight && hashLike(eight[2])) return [eight[1].length + 1, stem.length];
  if (hashLike(stem)) return [0, stem.length]; // only a hash
  return null;
}

/**
 * The span of a user's pattern's group `hash` in `base`.
 * @param {string} base
 * @param {RegExp} pattern
 */
function patternHashSpan(base, pattern) {
  const re = pattern.flags.includes('d') ? pattern : new RegExp(pattern.source, pattern.flags.replace('g', '') + 'd');
  re.lastIndex = 0;
  const m = re.exec(base);
  const span = m?.indices?.groups?.hash;
  return span && span[1] > span[0] ? [span[0], span[1]] : null;
}

/**
 * Literal text as a URLPattern constructor string: percent-encoded as a browser does, then
 * URLPattern's special characters escaped.
 * @param {string} text
 */
export function escapeUrlPattern(text) {
  const encoded = encodeURIComponent(text).replace(/%(3A|40|24|26|2B|2C|3B|3D)/g, (s) => decodeURIComponent(s));
  return encoded.replace(/[\\:*(){}?+#]/g, (c) => `\\${c}`);
}

/**
 * @typedef {{ key: string, match: string, dest: string | null, hashed: boolean }} Family
 *   key: the same for every version of the asset (POSIX path with `*` for the hash);
 *   match: URLPattern relative to the file's own URL (its folder), for `Use-As-Dictionary`;
 *   dest: fetch destination for `match-dest`, or null (every destination)
 */

/**
 * The family of a file, the versions of one asset across builds: its name with the hash taken out
 * (without one, its path). Null for a name that is only a hash: nothing stable to know it by.
 * @param {string} rel POSIX path relative to the root
 * @param {RegExp | ((rel: string) => [number, number] | null | undefined) | null} [hashPattern] a RegExp
 *   matched against the base name (its group `hash` is the hash), or a function of the path giving the
 *   hash's span in the base name (null: none; undefined: the default rule)
 * @returns {Family | null}
 */
export function familyOf(rel, hashPattern = null) {
  const slash = rel.lastIndexOf('/');
  const dir = rel.slice(0, slash + 1);
  const base = rel.slice(slash + 1);
  // A relative constructor string is read as `protocol:rest` up to its first colon, even an escaped one.
  if (base.includes(':')) return null;
  const ext = path.posix.extname(base);
  const dest = DESTINATIONS[ext.slice(1).toLowerCase()] ?? null;
  const given = typeof hashPattern === 'function'
    ? hashPattern(rel)
    : hashPattern ? patternHashSpan(base, hashPattern) : undefined;
  const byDefault = given === undefined && !PAGES.has(ext.toLowerCase());
  const span = byDefault ? defaultHashSpan(base.slice(0, base.length - ext.length)) : given ?? null;
  if (span === null) return { key: rel, match: escapeUrlPattern(base), dest, hashed: false };
  const before = base.slice(0, span[0]);
  const after = base.slice(span[1]);
  if (!/[A-Za-z0-9]/.test(before)) return null;
  const match = `${escapeUrlPattern(before)}*${escapeUrlPattern(after)}`;
  return { key: `${dir}${before}*${after}`, match, dest, hashed: true };
}

