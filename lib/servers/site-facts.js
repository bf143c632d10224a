import path from 'node:path';
import { INTERNAL_NAMES, contentTypeOf, internalKind, isImmutable, useAsDictionary } from '../site-policy.js';
import { DELTA_NAMES, ENCODING_NAMES } from '../encodings.js';

/** @typedef {import('../encodings.js').DeltaEncoding} DeltaEncoding */

/**
 * What a generated server configuration needs to know of a built site, from its manifest (pure):
 * maps over these, not a rule per file, keep the configurations small for big sites.
 */

/**
 * @typedef {{
 *   dictionaries: { key: string, hex: string }[],
 *   hashed: { uri: string, useAsDictionary: string }[],
 *   immutable: string[],
 *   types: Map<string, string>,
 *   variantTypes: Set<string>,
 *   variantExtensions: string[],
 *   deltaTypes: { type: string, extensions: string[], encodings: DeltaEncoding[] }[],
 *   encodings: string[],
 *   siteDictionary: string | null,
 *   siteDictionaryLink: string | null,
 *   internal: { source: string, kind: string }[],
 *   listedInternal: string[],
 *   manifestUri: string | null,
 *   files: number,
 * }} SiteFacts  hashed: immutable names with a dictionary record (usable as dictionaries); immutable: the
 *   other immutable names (hashed, or in an immutable folder); uris: URL paths (`/` and the site path, not
 *   percent-encoded); key: an `Available-Dictionary` value's base64; hex: the 16 hex digits a delta file's
 *   name carries for it; types: by lower-case extension ('' for names without one)
 */

/** An extension a configuration may name as it is (others are left to the server's defaults). */
export const SAFE_EXTENSION = /^[a-z0-9_+-]+$/;

/** Accept-Encoding names `token` with q > 0 (RE2- and PCRE-safe: no lookaround). @param {string} token */
export function acceptsToken(token) {
  return `(?:^|,)\\s*${token}\\s*(?:;\\s*q\\s*=\\s*(?:1(?:\\.0{0,3})?|0?\\.0{0,2}[1-9]\\d{0,2})\\s*)?(?:,|$)`;
}

/** The extension a server looks a type up by: lower case, without the dot, '' for none. @param {string} rel */
export function extensionOf(rel) {
  return path.posix.extname(rel).slice(1).toLowerCase();
}

/**
 * @param {import('../manifest/manifest.js').Manifest} manifest
 * @param {{ manifestRel: string | null }} o the manifest's site path when it is inside the folder
 * @returns {SiteFacts}
 */
export function siteFacts(manifest, { manifestRel }) {
  /** @type {Map<string, string>} */
  const dictionaries = new Map();
  /** @type {SiteFacts['hashed']} */
  const hashed = [];
  /** @type {string[]} */
  const immutable = [];
  /** @type {Map<string, string>} */
  const types = new Map();
  const variantTypes = new Set();
  /** @type {Set<string>} */
  const variantExtensions = new Set();
  /** @type {Map<string, { type: string, extensions: Set<string>, encodings: Set<DeltaEncoding> }>} */
  const deltaTypes = new Map();
  /** @type {string[]} */
  const listedInternal = [];
  const encodings = new Set();
  for (const [rel, e] of Object.entries(manifest.files)) {
    const ext = extensionOf(rel);
    const type = contentTypeOf(rel);
    if (!types.has(ext)) types.set(ext, type);
    if (Object.keys(e.variants).length > 0) {
      variantTypes.add(type);
      variantExtensions.add(ext);
    }
    for (const enc of Object.keys(e.variants)) encodings.add(enc);
    if (e.dictionary && isImmutable(e)) hashed.push({ uri: `/${rel}`, useAsDictionary: useAsDictionary(e.dictionary) });
    else if (isImmutable(e)) immutable.push(`/${rel}`);
    for (const [key, byEnc] of Object.entries(e.deltas ?? {})) {
      dictionaries.set(key, Buffer.from(key, 'base64').toString('hex').slice(0, 16));
      let d = deltaTypes.get(type);
      if (d === undefined) deltaTypes.set(type, (d = { type, extensions: new Set(), encodings: new Set() }));
      d.extensions.add(ext);
      for (const enc of DELTA_NAMES) if (byEnc[enc]) d.encodings.add(enc);
    }
    if (internalKind(rel, { manifestRel }) !== null && internalKind(rel, { manifestRel, listed: true }) === null) {
      listedInternal.push(`/${rel}`);
    }
  }
  return {
    dictionaries: [...dictionaries].map(([key, hex]) => ({ key, hex })).sort((a, b) => (a.hex < b.hex ? -1 : 1)),
    hashed,
    immutable,
    types,
    variantTypes,
    variantExtensions: [...variantExtensions].filter((e) => SAFE_EXTENSION.test(e)).sort(),
    deltaTypes: [...deltaTypes.values()].map((d) => ({
      type: d.type, extensions: [...d.extensions].sort(), encodings: [...d.encodings].sort(),
    })).sort((a, b) => (a.type < b.type ? -1 : 1)),
    encodings: ENCODING_NAMES.filter((e) => encodings.has(e)),
    siteDictionary: manifest.siteDictionary ? `/${manifest.siteDictionary.path}` : null,
    siteDictionaryLink: manifest.siteDictionary
      ? `</${encodeURI(manifest.siteDictionary.path)}>; rel="compression-dictionary"` : null,
    internal: INTERNAL_NAMES.filter((r) => r.kind !== 'manifest').map((r) => ({ source: r.source, kind: r.kind })),
    listedInternal,
    manifestUri: manifestRel === null ? null : `/${manifestRel}`,
    files: Object.keys(manifest.files).length,
  };
}
