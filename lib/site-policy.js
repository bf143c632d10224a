import path from 'node:path';
import { createRequire } from 'node:module';
import { MANIFEST_NAME } from './options.js';
import { TEMP_SUFFIX, isTempPath } from './fs-atomic.js';
import { ENCODINGS } from './encodings.js';

/**
 * The site policy: what a built site's names mean, in one place for every server of it. serveStatic
 * (lib/serve) and the generated nginx and Caddy configurations (lib/servers) read it; the bundlers'
 * entry points change it here. Three questions, each a small table or a pure function:
 * - which names are **hashed** (a content hash in the name: immutable, usable as dictionaries);
 * - which file **answers a URL** such as `/about` (the file, a folder's index, `about.html`);
 * - what is **internal** and never served by name (the manifest, variants, deltas, temp files).
 */

// ---- which file answers a URL ----

/**
 * The order in which a URL without a trailing slash is looked up: `file` the path as it is, `folder` a
 * folder of that name (a redirect to its URL with a slash, whose index answers), `extensions` the
 * path with each of the extensions (only for a path without one, as send does).
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

/**
 * The lookup order of a server: express.static's by default, the hosts' with `extensionsFirst`.
 * @param {boolean} extensionsFirst
 */
export function lookupOrder(extensionsFirst) {
  return extensionsFirst ? EXTENSIONS_FIRST_ORDER : LOOKUP_ORDER;
}

/** The index file of a folder URL (serveStatic's default `index`, and the generated configurations'). */
export const INDEX_FILES = Object.freeze(['index.html']);

/** The extensions tried for a path without one by `precompressor serve` and the generated configurations. */
export const PREVIEW_EXTENSIONS = Object.freeze(['html']);

/**
 * Content-Type of a file from its (original) name: mime-types, with charset for text.
 * @param {string} rel
 */
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
 * The names never served as they are, each as a regular expression over a site path (POSIX, relative
 * to the root; the generators prefix it with `/`). `always`: even a file the manifest lists (our own
 * manifest and temps); otherwise a listed file of that name is the user's and is served (a
 * `downloads/data.tar.gz` of theirs), an unlisted one is ours (a variant or a delta of a listed file).
 * `dotfile` holds unless dotfiles are allowed.
 * @typedef {'manifest' | 'temp' | 'variant' | 'delta' | 'dotfile'} InternalKind
 * @typedef {{ kind: InternalKind, source: string, always: boolean }} InternalName
 * @type {readonly Readonly<InternalName>[]}
 */
export const INTERNAL_NAMES = Object.freeze(/** @type {InternalName[]} */ ([
  { kind: 'manifest', source: `^${escapeRe(MANIFEST_NAME)}$`, always: true },
  { kind: 'temp', source: `${escapeRe(TEMP_SUFFIX)}(?:/|$)`, always: true },
  { kind: 'variant', source: `(?:${ENCODINGS.map((e) => escapeRe(e.suffix)).join('|')})$`, always: false },
  { kind: 'delta', source: '\\.[0-9a-f]{16}\\.dc[bz]$', always: false },
  { kind: 'dotfile', source: '(?:^|/)\\.', always: false },
]).map((r) => Object.freeze(r)));

/**
 * Is `rel` internal whatever the manifest lists: the manifest, our temps (the `always` kinds above;
 * the check serveStatic makes on each listed path).
 * @param {string} rel
 * @param {string | null} manifestRel the manifest's path in the site, null when outside it
 */
export function isAlwaysInternal(rel, manifestRel) {
  return rel === manifestRel || isTempPath(rel);
}

const INTERNAL_RES = INTERNAL_NAMES.map((r) => ({ ...r, re: new RegExp(r.source) }));

/**
 * Why `rel` is never served by name, or null when it may be. `listed`: the manifest lists it as a
 * file (a user's file whose name looks like ours); `manifestRel`: the manifest's own path when not
 * the default; `dotfiles`: served (serveStatic's `dotfiles: 'allow'`).
 * @param {string} rel a site path
 * @param {{ listed?: boolean, manifestRel?: string | null, dotfiles?: boolean }} [o]
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
 * Are responses of this file immutable (a year of freshness, `immutable`)? Those of a hashed name,
 * whatever its size or type: the build recorded it (`hashed`, or in its `dictionary` record, as
 * manifests before `hashed` did).
 * @param {{ hashed?: true, dictionary?: { hashed: boolean } }} entry a manifest entry
 */
export function isImmutable(entry) {
  return entry.hashed === true || entry.dictionary?.hashed === true;
}

/**
 * Folders whose every file is immutable whatever its name (a build id in the path, not a hash in
 * the name): Next.js's `_next/static/` (its `<buildId>/_buildManifest.js`).
 * @type {readonly string[]}
 */
export const IMMUTABLE_FOLDERS = Object.freeze(['_next/static/']);

/**
 * Is a site path in one of the IMMUTABLE_FOLDERS (at the root)?
 * @param {string} rel
 */
export function inImmutableFolder(rel) {
  return IMMUTABLE_FOLDERS.some((f) => rel.startsWith(f));
}

/**
 * Does a browser keep a response with this Cache-Control as a dictionary? Only a fresh one: not
 * `max-age=0` (serveStatic's default for a name without a hash). Without the header (`cacheControl:
 * false`), the browser's heuristic freshness may keep it.
 * @param {string | null} cacheControl
 */
export function keptAsDictionary(cacheControl) {
  if (cacheControl === null) return true;
  if (/(?:^|[\s,])no-store/.test(cacheControl)) return false;
  const m = /(?:^|[\s,])max-age=(\d+)/.exec(cacheControl);
  return m === null || Number(m[1]) > 0;
}


/**
 * RFC 8941 sf-string: quoted, with `\` and `"` escaped (the patterns are ASCII).
 * @param {string} s
 */
function sfString(s) {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `Use-As-Dictionary` value of a file's dictionary record: `match="<URLPattern>"` (relative to
 * the file's URL, so that it holds wherever the folder is mounted) and `match-dest` when known.
 * @param {import('./manifest.js').DictionaryEntry} d
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

/**
 * Does a run of hash characters look like a content hash rather than a word? A digit says so at
 * any length. Without one, only Rollup's default 8 base64url characters (about one random hash in
 * five has no digit) with a capital, `-` or `_`, and not a lowercase or Capitalised word
 * (`settings`, `Settings`, `validate`): the rare hash of that shape is missed, never a word taken.
 * @param {string} s
 */
function hashLike(s) {
  if (!hashChars.test(s) || s.length < 8 || s.length > 64) return false;
  if (/[0-9]/.test(s)) return true;
  return s.length === 8 && /[A-Z_-]/.test(s) && !/^[A-Z]?[a-z]+$/.test(s);
}

/**
 * Where the content hash is in a file's base name (without extension), by the default rule:
 * `[name].[hash].ext` and `[name].[hash].chunk.ext` (webpack, Parcel, Astro, SvelteKit: a
 * dot-separated segment that is hash-like, the last such), else `[name]-[hash].ext` (Vite/Rollup,
 * esbuild: 8 hash-like characters, or 8-64 hex digits with a digit), else a name that is only a
 * hash (SvelteKit's `chunks/[hash].js`). Returns [start, end) or null.
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
  const hex = /^(.+)-([0-9a-f]{8,64})$/.exec(stem);
  if (hex && /[0-9]/.test(hex[2])) return [hex[1].length + 1, stem.length];
  const eight = /^(.+)-([A-Za-z0-9_-]{8})$/.exec(stem);
  if (eight && hashLike(eight[2])) return [eight[1].length + 1, stem.length];
  if (hashLike(stem)) return [0, stem.length]; // only a hash
  return null;
}

/**
 * The span of the named group `hash` of a user's pattern in `base`, or null.
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
 * Escape literal text for the URLPattern constructor-string syntax, as it appears in a URL path:
 * percent-encoded like a browser does (`:`, `@`, `+` and friends stay), then the characters
 * URLPattern gives a meaning (`\ : * ( ) { } ? + #`) escaped with a backslash.
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
 * The family of a file: the versions of one asset across builds, by its name with the content hash
 * taken out. A file without a hash is a family of one path (rewritten in place across builds).
 * Returns null for a name that is only a hash (no stable part to recognise it by), and for a name
 * with a colon (URLPattern would read a relative pattern with one as a protocol).
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
  const span = given === undefined ? defaultHashSpan(base.slice(0, base.length - ext.length)) : given;
  if (span === null) return { key: rel, match: escapeUrlPattern(base), dest, hashed: false };
  const before = base.slice(0, span[0]);
  const after = base.slice(span[1]);
  if (!/[A-Za-z0-9]/.test(before)) return null;
  const match = `${escapeUrlPattern(before)}*${escapeUrlPattern(after)}`;
  return { key: `${dir}${before}*${after}`, match, dest, hashed: true };
}

