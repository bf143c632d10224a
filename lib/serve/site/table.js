import path from 'node:path';
import crypto from 'node:crypto';
import { tokenOf, variantPath } from '../../encodings.js';
import { DELTA_VARY, deltaFilesOf, optionsForHashed, useAsDictionary } from './dictionary.js';
import { absPath } from '../../paths.js';
import { contentTypeOf, isImmutable, keptAsDictionary, lookupOrder } from '../../site-policy.js';

/** @typedef {import('../../encodings.js').Encoding} Encoding */

/**
 * A listed path's entry with every representation's headers precomputed, and the lookup of a request
 * path (pure: the disk facts come in as a `check` from load.js).
 */

/**
 * @typedef {{
 *   encoding: string, file: string, size: number, etag: string, lastModified: string,
 *   mtimeMs: number, body: Buffer | null, head: string[], head304: string[],
 *   stat: { size: number, mtime: Date, mtimeMs: number }, dev: number, ino: number,
 *   used: boolean, prev: import('../bodies/index.js').Ringed | null, next: import('../bodies/index.js').Ringed | null,
 *   linked: string[][] | null,
 * }} Rep  dev/ino: the file checked at load (a descriptor opened later must be that file; -1 when unknown);
 *   body: held by the body cache (lib/serve/bodies/body-cache.js), which also keeps `used`, `prev` and `next`;
 *   linked: `head` with the site dictionary's Link, by URL depth (lib/serve/http/site-link.js)
 * @typedef {{
 *   rel: string, path: string, src: import('../../manifest/manifest.js').FileEntry, type: string,
 *   vary: boolean, mask: number, stale: boolean, identity: Rep, reps: Record<string, Rep>,
 *   memory: string[], varyValue: string, deltas: Map<string, { dcb?: Rep, dcz?: Rep }> | null,
 *   link: import('../http/index.js').SiteLink | null,
 *   used: boolean, prev: import('../bodies/index.js').Ringed | null, next: import('../bodies/index.js').Ringed | null,
 * }} Entry  deltas: by dictionary hash (standard base64), the deploy deltas (lib/serve/site/dictionary.js);
 *   used, prev, next: kept by Entries (lib/serve/site/entries.js, its Clock); link: the site dictionary an HTML page
 *   links to (its `Link` header, added per response, depends on the URL)
 * @typedef {{
 *   stale: boolean, file: string, variants: Record<string, string>, bodies: Record<string, Buffer>,
 *   memory: string[], deltas?: Record<string, string>, ids?: Record<string, { dev: number, ino: number }>,
 *   mtimeMs?: number, changed?: boolean,
 * }} Check  what load.js found on disk for one entry (deltas: by file name, the path found;
 *   ids: by encoding ('identity' included) or delta file name, the dev/ino of the file checked;
 *   mtimeMs: the original's on disk; changed: its content hashed and unlike the manifest's)
 * @typedef {{
 *   root: string, opts: Readonly<import('../http/index.js').ServeOptions>,
 *   maskOf: (encodings: string[]) => number, settingsTag: string,
 *   siteLink?: import('../http/index.js').SiteLink | null,
 * }} TableContext  siteLink: the manifest's site dictionary (HTML responses link to it)
 */

/**
 * Append `add` to a Vary value without duplicating a name.
 * @param {number | string | string[] | undefined | null} existing the header as res.getHeader() gives it
 * @param {string} [add]
 */
export function appendVary(existing, add = 'Accept-Encoding') {
  if (existing === undefined || existing === null || existing === '') return add;
  const value = Array.isArray(existing) ? existing.join(', ') : String(existing);
  const tokens = value.split(',').map((t) => t.trim().toLowerCase());
  if (tokens.includes('*')) return value;
  const missing = add.split(',').map((t) => t.trim()).filter((t) => !tokens.includes(t.toLowerCase()));
  return missing.length === 0 ? value : `${value}, ${missing.join(', ')}`;
}

export { contentTypeOf } from '../../site-policy.js';

/**
 * Short tag of the compressor settings, so that variants made with other settings get other ETags.
 * @param {unknown} settings
 */
export function settingsTagOf(settings) {
  return crypto.createHash('sha256').update(JSON.stringify(settings ?? null)).digest('base64url').slice(0, 6);
}

const ETAGC = /[^\x21\x23-\x7e]/g;

/**
 * Strong ETag from the content hash; variants add encoding, settings and size.
 * @param {string} hash
 * @param {string} encoding
 * @param {number} size
 * @param {string} settingsTag
 */
export function etagOf(hash, encoding, size, settingsTag) {
  const h = hash.replace(/^sha256-/, '').replace(ETAGC, '').slice(0, 32);
  return encoding === 'identity' ? `"${h}"` : `"${h}-${encoding}-${settingsTag}.${size.toString(36)}"`;
}

/**
 * @returns {Rep}
 * @param {string} encoding
 * @param {string} file
 * @param {number} size
 * @param {string} etag
 * @param {number} mtimeMs
 * @param {Buffer | null} body
 * @param {{ type: string, vary: boolean, varyValue?: string, extra?: string[] | null }} entryInfo
 * @param {Readonly<import("../http/index.js").ServeOptions>} opts
 * @param {{ dev: number, ino: number }} [id] the file checked at load (unknown: never matches a descriptor)
 */
function makeRep(encoding, file, size, etag, mtimeMs, body, entryInfo, opts, id = NO_ID) {
  // fs.Stats rounds mtimeMs to its mtime Date; send's Last-Modified and ETag come from that Date
  const lastModified = new Date(Math.round(mtimeMs)).toUTCString();
  const head = ['Content-Type', entryInfo.type, 'Content-Length', String(size)];
  if (encoding !== 'identity') head.push('Content-Encoding', tokenOf(encoding));
  if (entryInfo.extra) head.push(...entryInfo.extra);
  if (opts.acceptRanges) head.push('Accept-Ranges', 'bytes');
  const validators = [];
  if (entryInfo.vary) validators.push('Vary', entryInfo.varyValue ?? 'Accept-Encoding');
  if (opts.etag) validators.push('ETag', etag);
  if (opts.cacheControl) validators.push('Cache-Control', opts.cacheControl);
  if (opts.lastModified) head.push('Last-Modified', lastModified);
  head.push(...validators);
  // a 304 carries what express.static's does: the 200's headers without the Content-* ones
  // (RFC 9110 §15.4.5 allows them: they guide the cache's update of the stored response)
  const head304 = [...validators];
  if (opts.acceptRanges) head304.push('Accept-Ranges', 'bytes');
  if (opts.lastModified) head304.push('Last-Modified', lastModified);
  const stat = Object.freeze({ size, mtimeMs, mtime: new Date(Math.round(mtimeMs)) });
  return {
    encoding, file, size, etag, lastModified, mtimeMs, body, head, head304, stat,
    dev: id.dev, ino: id.ino, used: false, prev: null, next: null, linked: null,
  };
}

/** @type {Readonly<{ dev: number, ino: number }>} */
const NO_ID = Object.freeze({ dev: -1, ino: -1 });

/**
 * A representation built from an fstat (stale entries, files the manifest does not list):
 * identity only, weak ETag from size and mtime like send, Vary when the path is negotiable.
 * @param {string} file
 * @param {string} type
 * @param {boolean} vary
 * @param {{ size: number, mtimeMs: number }} st
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @returns {Rep}
 */
export function statRep(file, type, vary, st, opts) {
  const etag = `W/"${st.size.toString(16)}-${Math.round(st.mtimeMs).toString(16)}"`;
  return makeRep('identity', file, st.size, etag, st.mtimeMs, null, { type, vary }, opts);
}

/**
 * Without `check` every listed variant is taken as present (pure tests).
 * @param {string} rel
 * @param {import('../../manifest/manifest.js').FileEntry} src
 * @param {TableContext} ctx
 * @param {Check} [check]
 * @returns {Entry}
 */
export function buildEntry(rel, src, ctx, check) {
  const dict = ctx.opts.dictionaries && src.dictionary ? src.dictionary : null;
  // a hash in the name (site policy): immutable, whatever the file's size, type or dictionaries
  const opts = isImmutable(src) ? optionsForHashed(ctx.opts) : ctx.opts;
  const logical = absPath(ctx.root, rel);
  const listed = opts.encodings.filter((e) => Object.hasOwn(src.variants, e));
  const present = check ? listed.filter((e) => Object.hasOwn(check.variants, e)) : listed;
  const deltaFiles = ctx.opts.dictionaries
    ? deltaFilesOf(path.posix.basename(rel), src).filter((d) => !check || Object.hasOwn(check.deltas ?? {}, d.name))
    : [];
  const type = typeof src.type === 'string' && src.type !== '' ? src.type : contentTypeOf(rel);
  // only where a browser keeps it: not on a `max-age=0` response (a name without a hash, by default)
  const extra = dict && keptAsDictionary(opts.cacheControl) ? ['Use-As-Dictionary', useAsDictionary(dict)] : [];
  // not in the heads: the Link depends on the URL a page is answered at (respond.js adds it)
  const link = ctx.opts.dictionaries && ctx.siteLink && type.startsWith('text/html') ? ctx.siteLink : null;
  const info = {
    type,
    vary: listed.length > 0 || deltaFiles.length > 0,
    varyValue: deltaFiles.length > 0 ? DELTA_VARY : 'Accept-Encoding',
    extra: extra.length > 0 ? extra : null,
  };
  const bodies = check?.bodies ?? {};
  const file = check?.file ?? logical;
  // the file's own mtime (a copy that kept whole seconds moved it, its content checked): what open() will see
  const mtimeMs = check?.mtimeMs ?? src.mtimeMs;
  /** @type {Record<string, Rep>} */
  const reps = {};
  for (const e of present) {
    const size = /** @type {{ size: number }} */ (src.variants[/** @type {Encoding} */ (e)]).size;
    const vfile = check ? check.variants[e] : variantPath(file, e);
    const etag = etagOf(src.hash, e, size, ctx.settingsTag);
    reps[e] = makeRep(e, vfile, size, etag, mtimeMs, bodies[e] ?? null, info, opts, check?.ids?.[e]);
  }
  const identityTag = etagOf(src.hash, 'identity', src.size, '');
  const identity = makeRep('identity', file, src.size, identityTag, mtimeMs, bodies.identity ?? null, info, opts,
    check?.ids?.identity);
  /** @type {Map<string, { dcb?: Rep, dcz?: Rep }>} */
  const deltas = new Map();
  for (const d of deltaFiles) {
    const dfile = check?.deltas?.[d.name] ?? path.join(path.dirname(file), d.name);
    const byEnc = deltas.get(d.dict) ?? {};
    const tag = etagOf(d.hash, 'identity', d.size, '');
    byEnc[d.encoding] = makeRep(d.encoding, dfile, d.size, tag, mtimeMs, null, info, opts, check?.ids?.[d.name]);
    deltas.set(d.dict, byEnc);
  }
  return {
    rel, path: logical, src, type: info.type, vary: info.vary, mask: ctx.maskOf(present),
    stale: check?.stale ?? false, identity, reps, memory: check?.memory ?? [], varyValue: info.varyValue,
    deltas: deltas.size > 0 ? deltas : null, link, used: false, prev: null, next: null,
  };
}

/**
 * Resolve a parsed request path against the listed paths: exact path, folder index, `extensions`,
 * folder redirect.
 * @template E
 * @param {{ find(rel: string): E | undefined, dirs: Set<string>, size: number, manifestRel: string | null }} site
 * @param {{ rel: string, slash: boolean }} p
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @returns {{ entry: E } | { redirect: true } | null}
 */
export function resolveEntry(site, p, opts) {
  const { rel, slash } = p;
  if (rel === site.manifestRel) return null;
  if (!slash) {
    // in the site policy's order (lib/site-policy.js): the file, a folder's redirect, the extensions
    const order = lookupOrder(opts.extensionsFirst);
    for (let i = 0; i < order.length; i++) {
      const found = lookupStep(site, rel, order[i], opts);
      if (found !== undefined) return found;
    }
    return null;
  }
  if (rel !== '' && !site.dirs.has(rel)) return null;
  for (const name of opts.index) {
    const hit = site.find(rel === '' ? name : `${rel}/${name}`);
    if (hit !== undefined) return { entry: hit };
  }
  return null;
}

/**
 * One step of the lookup of a path without a trailing slash: what answers, or undefined to go on
 * (a folder without `redirect` answers null: a miss, as express.static's).
 * @template E
 * @param {{ find(rel: string): E | undefined, dirs: Set<string>, size: number }} site
 * @param {string} rel
 * @param {import('../../site-policy.js').LookupStep} step
 * @param {Readonly<import('../http/index.js').ServeOptions>} opts
 * @returns {{ entry: E } | { redirect: true } | null | undefined}
 */
function lookupStep(site, rel, step, opts) {
  if (step === 'file') {
    const entry = site.find(rel);
    return entry === undefined ? undefined : { entry };
  }
  if (step === 'folder') {
    // rel '' without a slash: the mount point of a mounted middleware, a folder if it has files
    if (!site.dirs.has(rel) || (rel === '' && site.size === 0)) return undefined;
    return opts.redirect ? { redirect: true } : null;
  }
  // like send: extensions are tried only for a path without one
  if (rel === '' || path.posix.extname(rel) !== '') return undefined;
  for (const ext of opts.extensions) {
    const hit = site.find(`${rel}.${ext}`);
    if (hit !== undefined) return { entry: hit };
  }
  return undefined;
}

/**
 * The Vary header of a response of `entry` that carries no representation (412, 416).
 * @param {import('../http/index.js').ResponseHeaders} res
 * @param {{ vary: boolean }} entry
 */
export function varyHead(res, entry) {
  return entry.vary ? ['Vary', appendVary(res.getHeader('vary'), /** @type {any} */ (entry).varyValue)] : [];
}
