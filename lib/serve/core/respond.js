import fs from 'node:fs';
import { appendVary, varyHead } from '../site/index.js';
import { evaluatePreconditions, evaluateRange } from '../http/index.js';
import { linkedHead, placeOf } from '../http/index.js';

/**
 * The reply for a selected representation (pure but for the setHeaders hook and the headers set
 * before): header merge, 412/304, Range (206/416, on the selected representation's bytes), HEAD,
 * body from memory or from an already opened and fstat-checked file descriptor.
 */

/** Headers that `setHeaders` (or an earlier middleware) may set and we then leave alone, like send. */
const OVERRIDABLE = new Set(['Content-Type', 'ETag', 'Cache-Control', 'Last-Modified']);
const CONTENT_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-range', 'content-language'];
/** The place of a request whose path was not parsed. */
const ROOT = Object.freeze({ rel: '', slash: true });

/**
 * The request a reply is decided for (lib/serve/core/core.js's Call).
 * @typedef {{ req: import('../http/index.js').RequestInfo, res: import('../http/index.js').ResponseHeaders,
 *   s: { opts: Readonly<import('../http/index.js').ServeOptions> }, p: { rel: string, slash: boolean } | null,
 * }} Answering  p: the request's path (null: not parsed, answered as the root's)
 */

/** @param {number | null} fd */
function closeFd(fd) {
  if (fd !== null) fs.close(fd, () => {});
}

/**
 * The header array with a user-set or earlier-middleware header left in place and Vary merged.
 * @param {import('../http/index.js').ResponseHeaders} res
 * @param {string[]} head
 */
function merge(res, head) {
  /** @type {string[]} */
  const out = [];
  for (let i = 0; i < head.length; i += 2) {
    const name = head[i];
    if (name === 'Vary') out.push(name, appendVary(res.getHeader('vary'), head[i + 1]));
    else if (!(OVERRIDABLE.has(name) && res.hasHeader(name))) out.push(name, head[i + 1]);
  }
  return out;
}

/**
 * Has the hook, or a handler before, set what the representation's headers must then be merged with?
 * @param {import('../http/index.js').ResponseHeaders} res
 * @param {import("../http/index.js").SetHeaders | null} hook
 */
export function needsMerge(res, hook) {
  return hook || res.hasHeader('vary') || res.hasHeader('content-type') || res.hasHeader('etag') ||
    res.hasHeader('cache-control') || res.hasHeader('last-modified');
}

/**
 * The header arrays and validators of `rep` for this response: the setHeaders hook runs first,
 * then what it (or an earlier middleware) set wins over ours and Vary is appended. In the common
 * case (no hook, nothing set before, both validators on) that is `rep` itself: nothing is built.
 * @returns {{ head: string[], head304: string[], etag?: string, lastModified?: string }}
 * @param {import('../http/index.js').ResponseHeaders} res
 * @param {{ path: string }} entry
 * @param {import('../site/index.js').Rep} rep
 * @param {Readonly<import("../http/index.js").ServeOptions>} opts
 * @param {fs.Stats | undefined} stat
 */
function headersFor(res, entry, rep, opts, stat) {
  if (opts.setHeaders) opts.setHeaders(res, entry.path, stat ?? rep.stat, rep.encoding);
  const merged = needsMerge(res, opts.setHeaders);
  if (!merged && opts.etag && opts.lastModified) return rep;
  const h = {
    head: rep.head, head304: rep.head304,
    etag: opts.etag ? rep.etag : undefined, lastModified: opts.lastModified ? rep.lastModified : undefined,
  };
  if (merged) {
    h.head = merge(res, h.head);
    h.head304 = merge(res, h.head304);
    const userEtag = res.getHeader('etag');
    if (userEtag !== undefined) h.etag = String(userEtag);
    const userLm = res.getHeader('last-modified');
    if (userLm !== undefined) h.lastModified = String(userLm);
  }
  return h;
}

/**
 * A 412 or 416: to an error handler as express.static passes them (an http-errors object, the
 * response keeping the representation's metadata headers, as send leaves them), else `reply`.
 * @param {412 | 416} status
 * @param {string[]} head
 * @param {Record<string, string>} headers
 * @param {string[]} replyHead
 * @returns {import('../http/index.js').Decision}
 */
function reject(status, head, headers, replyHead) {
  /** @type {string[]} */
  const meta = [];
  for (let i = 0; i < head.length; i += 2) {
    if (head[i] !== 'Content-Length' && head[i] !== 'Content-Encoding') meta.push(head[i], head[i + 1]);
  }
  return { kind: 'reject', status, head: meta, headers, reply: { kind: 'reply', status, head: replyHead, body: null } };
}

/**
 * The decision for `rep` of `entry`: preconditions, then the whole body or a range.
 * @param {Answering} c
 * @param {{ path: string, vary: boolean, link?: import('../http/index.js').SiteLink | null }} entry link: the
 *   site dictionary an HTML page links to
 * @param {import('../site/index.js').Rep} rep
 * @param {number | null} fd open descriptor of rep.file, or null when rep.body is in memory
 * @param {import('node:fs').Stats} [stat] fstat of fd, passed to setHeaders
 * @returns {import('../http/index.js').Decision}
 */
export function respond(c, entry, rep, fd, stat) {
  const { req, res, s: { opts } } = c;
  const h = headersFor(res, entry, rep, opts, stat);
  // h may be rep itself: never written to
  const head = entry.link ? linkedHead(h.head, rep, entry.link, placeOf(c.p ?? ROOT, req.originalUrl), res) : h.head;
  // a status set before (an error page served from a file) is kept, and never turned into a 304
  const status = res.statusCode;
  const cachable = (status >= 200 && status < 300) || status === 304;
  const pre = evaluatePreconditions(req.headers, h, cachable);
  if (pre !== 200) {
    closeFd(fd);
    if (pre === 304) {
      for (const name of CONTENT_HEADERS) if (res.hasHeader(name)) res.removeHeader(name);
      return { kind: 'reply', status: 304, head: h.head304, body: null };
    }
    return reject(412, head, {}, [...varyHead(res, entry), 'Content-Length', '0']);
  }
  const r = opts.acceptRanges && req.headers.range !== undefined ? evaluateRange(req.headers, rep.size, h) : null;
  if (r?.kind === 'unsatisfiable') {
    closeFd(fd);
    const contentRange = `bytes */${rep.size}`;
    return reject(416, head, { 'Content-Range': contentRange }, [
      ...varyHead(res, entry), 'Accept-Ranges', 'bytes', 'Content-Range', contentRange, 'Content-Length', '0',
    ]);
  }
  if (r?.kind === 'partial') return bytes(c, rep, fd, stat, 206, rangeHead(head, r, rep.size), r.start, r.end);
  return bytes(c, rep, fd, stat, status, head, 0, rep.size - 1);
}

/**
 * The 200 header array turned into the 206 one for bytes [start, end].
 * @param {string[]} head
 * @param {{ start: number, end: number }} range
 * @param {number} size
 */
function rangeHead(head, { start, end }, size) {
  const out = [...head, 'Content-Range', `bytes ${start}-${end}/${size}`];
  out[out.indexOf('Content-Length') + 1] = String(end - start + 1);
  return out;
}

/**
 * The reply with bytes [start, end] of the representation (none for HEAD), from memory or fd.
 * @param {Answering} c
 * @param {import('../site/index.js').Rep} rep
 * @param {number | null} fd
 * @param {fs.Stats | undefined} stat
 * @param {number} status
 * @param {string[]} head
 * @param {number} start
 * @param {number} end
 * @returns {import('../http/index.js').Reply}
 */
function bytes(c, rep, fd, stat, status, head, start, end) {
  if (c.req.method === 'HEAD' || end < start) {
    closeFd(fd);
    return { kind: 'reply', status, head, body: null };
  }
  if (rep.body !== null) {
    return { kind: 'reply', status, head, body: status === 206 ? rep.body.subarray(start, end + 1) : rep.body };
  }
  return { kind: 'reply', status, head, body: { fd: /** @type {number} */ (fd), start, end, stat } };
}
