import { deltaPath } from '../../manifest/manifest.js';
import { IMMUTABLE_CACHE_CONTROL } from '../../site-policy.js';
import { DELTA_NAMES } from '../../encodings.js';

/** @typedef {import('../../encodings.js').DeltaEncoding} DeltaEncoding */

/**
 * Serving deploy deltas (RFC 9842), pure: `Use-As-Dictionary`, and the choice of a delta for a request
 * that offers a dictionary.
 */

/** Vary of every response of a file that has deltas. */
export const DELTA_VARY = 'Accept-Encoding, Available-Dictionary';

const CACHE_LIMIT = 1000;
/** @type {Map<string, number>} Accept-Encoding value → bit 1 dcb, bit 2 dcz */
const acceptCache = new Map();
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * Which delta codings an Accept-Encoding value names explicitly with q > 0 (never through `*`):
 * a bit mask, 1 for dcb, 2 for dcz.
 * @param {string | string[] | undefined} header
 */
export function acceptedDeltas(header) {
  if (header === undefined) return 0;
  const value = Array.isArray(header) ? header.join(', ') : header;
  let mask = acceptCache.get(value);
  if (mask !== undefined) return mask;
  mask = 0;
  const seen = new Set();
  for (const part of value.split(',')) {
    const [token, ...params] = part.split(';');
    const name = token.trim().toLowerCase();
    if ((name !== 'dcb' && name !== 'dcz') || seen.has(name)) continue;
    seen.add(name);
    let q = 1;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq !== -1 && p.slice(0, eq).trim().toLowerCase() === 'q') {
        const v = p.slice(eq + 1).trim();
        q = QVALUE.test(v) ? Number(v) : 0;
      }
    }
    if (q > 0) mask |= name === 'dcb' ? 1 : 2;
  }
  if (acceptCache.size >= CACHE_LIMIT) acceptCache.clear();
  acceptCache.set(value, mask);
  return mask;
}

const BYTE_SEQUENCE = /^[ \t]*:([A-Za-z0-9+/]{43}=):[ \t]*(?:;[ \t]*[a-z*][a-z0-9_.*-]*(?:=[^;,]*)?[ \t]*)*$/;

/**
 * The canonical base64 of the SHA-256 an `Available-Dictionary` value names (RFC 8941 `:<base64>:`), or null.
 * @param {string | string[] | undefined} header
 * @returns {string | null}
 */
export function parseAvailableDictionary(header) {
  if (typeof header !== 'string') return null;
  const m = BYTE_SEQUENCE.exec(header);
  if (m === null) return null;
  const bytes = Buffer.from(m[1], 'base64');
  return bytes.length === 32 && bytes.toString('base64') === m[1] ? m[1] : null;
}

/**
 * May this request get a delta? RFC 9842: from another site, only in `cors` mode (the page can read
 * the response anyway).
 * @param {import('node:http').IncomingHttpHeaders} headers
 */
export function fetchAllowsDelta(headers) {
  const site = headers['sec-fetch-site'];
  if (site === undefined || site === 'same-origin' || site === 'none') return true;
  return headers['sec-fetch-mode'] === 'cors';
}

/**
 * The delta to send for this request, or null: the smaller of dcb and dcz against the dictionary it
 * offers, accepted explicitly.
 * @template R
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @param {Map<string, { dcb?: R & { size: number }, dcz?: R & { size: number } }>} deltas
 * @returns {(R & { size: number }) | null}
 */
export function chooseDelta(headers, deltas) {
  const hash = parseAvailableDictionary(headers['available-dictionary']);
  if (hash === null) return null;
  const byEnc = deltas.get(hash);
  if (byEnc === undefined) return null;
  const mask = acceptedDeltas(headers['accept-encoding']);
  if (mask === 0 || !fetchAllowsDelta(headers)) return null;
  const dcb = mask & 1 ? byEnc.dcb : undefined;
  const dcz = mask & 2 ? byEnc.dcz : undefined;
  if (dcb && dcz) return dcb.size <= dcz.size ? dcb : dcz;
  return dcb ?? dcz ?? null;
}

export { useAsDictionary } from '../../site-policy.js';

/** @type {WeakMap<object, object>} */
const hashedOpts = new WeakMap();

/**
 * The serve options for representations of a hashed asset: `immutableHashed` gives them a year of
 * freshness and `immutable` (unless Cache-Control is off or a `setHeaders` sets its own).
 * @template {{ cacheControl: string | null, immutableHashed: boolean }} O
 * @param {O} opts
 * @returns {O}
 */
export function optionsForHashed(opts) {
  if (!opts.immutableHashed || opts.cacheControl === null) return opts;
  let o = hashedOpts.get(opts);
  if (!o) hashedOpts.set(opts, (o = Object.freeze({ ...opts, cacheControl: IMMUTABLE_CACHE_CONTROL })));
  return /** @type {O} */ (o);
}

/**
 * Per delta of an entry, the file name to look for beside it and its manifest record.
 * @param {string} base base name of the file
 * @param {import('../../manifest/manifest.js').FileEntry} src
 * @returns {{ dict: string, encoding: DeltaEncoding, name: string, size: number, hash: string }[]}
 */
export function deltaFilesOf(base, src) {
  const out = [];
  for (const [dict, byEnc] of Object.entries(src.deltas ?? {})) {
    for (const encoding of DELTA_NAMES) {
      const d = byEnc[encoding];
      if (d) out.push({ dict, encoding, name: deltaPath(base, dict, encoding), size: d.size, hash: d.hash });
    }
  }
  return out;
}
