import fresh from 'fresh';
import parseRange from 'range-parser';

/**
 * Pure HTTP decisions for one selected representation (RFC 9110 §13.2.2 order):
 * If-Match, else If-Unmodified-Since → 412; If-None-Match, else If-Modified-Since → 304
 * (via jshttp `fresh`, which also honours `Cache-Control: no-cache`); then Range with If-Range.
 */

/**
 * Strong comparison against an If-Match list (`*` matches any existing representation).
 * @param {string} header
 * @param {string | undefined} etag
 */
function ifMatchPasses(header, etag) {
  if (String(header).trim() === '*') return true;
  if (!etag || etag.startsWith('W/')) return false;
  return String(header).split(',').some((t) => t.trim() === etag);
}

/**
 * Does the request carry none of the headers that make its answer depend on the representation's
 * validators or bytes (preconditions, Range)? Then every such request for it is answered alike.
 * @param {import('node:http').IncomingHttpHeaders} req
 */
export function unconditional(req) {
  return req['if-none-match'] === undefined && req['if-modified-since'] === undefined && req.range === undefined &&
    req['if-match'] === undefined && req['if-unmodified-since'] === undefined;
}

/**
 * @param {import('node:http').IncomingHttpHeaders} req
 * @param {{ etag?: string, lastModified?: string }} rep effective validators (absent when disabled)
 * @param {boolean} [cachable] false when the response already has a status other than 2xx/304
 *   (a static error page): then never 304, as send
 * @returns {200 | 304 | 412}
 */
export function evaluatePreconditions(req, rep, cachable = true) {
  const ifMatch = req['if-match'];
  if (ifMatch !== undefined) {
    if (!ifMatchPasses(ifMatch, rep.etag)) return 412;
  } else {
    const ius = req['if-unmodified-since'];
    if (ius !== undefined && rep.lastModified) {
      const since = Date.parse(ius);
      if (!Number.isNaN(since) && Date.parse(rep.lastModified) > since) return 412;
    }
  }
  const hasCond = req['if-none-match'] !== undefined || req['if-modified-since'] !== undefined;
  if (cachable && hasCond && fresh(req, { etag: rep.etag, 'last-modified': rep.lastModified })) return 304;
  return 200;
}

/**
 * @typedef {{ kind: 'full' } | { kind: 'partial', start: number, end: number } | { kind: 'unsatisfiable' }}
 *   RangeDecision
 */

/**
 * Decide a Range request on the selected representation of `size` bytes. Only single byte
 * ranges are honoured (overlapping ranges are combined first); multiple ranges, other units,
 * malformed headers and a failed If-Range give the full representation, like send.
 * If-Range must match the strong ETag exactly, or equal Last-Modified when given a date.
 * @param {import('node:http').IncomingHttpHeaders} req
 * @param {number} size
 * @param {{ etag?: string, lastModified?: string }} rep
 * @returns {RangeDecision}
 */
export function evaluateRange(req, size, rep) {
  const header = req.range;
  if (header === undefined || !/^ *bytes=/.test(header)) return { kind: 'full' };
  const ifRange = req['if-range'];
  if (ifRange !== undefined) {
    const v = String(ifRange).trim();
    if (v.startsWith('"') || v.startsWith('W/')) {
      if (!rep.etag || rep.etag.startsWith('W/') || v !== rep.etag) return { kind: 'full' };
    } else {
      const date = Date.parse(v);
      if (!rep.lastModified || Number.isNaN(date) || date !== Date.parse(rep.lastModified)) return { kind: 'full' };
    }
  }
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return { kind: 'unsatisfiable' };
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return { kind: 'full' };
  return { kind: 'partial', start: ranges[0].start, end: ranges[0].end };
}
