import fs from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { appendVary, varyHead } from './table.js';
import { evaluatePreconditions, evaluateRange } from './conditional.js';
import { httpError } from './replies.js';
import { linkedHead, placeOf } from './site-link.js';

/**
 * Writing one response for a selected representation: setHeaders hook, header merge, 412/304,
 * Range (206/416, on the selected representation's bytes), HEAD, body from memory or from an
 * already opened and fstat-checked file descriptor. Every path closes the descriptor.
 */

/** Headers that `setHeaders` (or an earlier middleware) may set and we then leave alone, like send. */
const OVERRIDABLE = new Set(['Content-Type', 'ETag', 'Cache-Control', 'Last-Modified']);
const CONTENT_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-range', 'content-language'];
/** The place of a request whose path was not parsed. */
const ROOT = Object.freeze({ rel: '', slash: true });
/** Bytes per read of a streamed file: fewer trips through libuv's pool (docs/benchmarks.md, "Serving"). */
const STREAM_CHUNK = 512 * 1024;

/**
 * Response already closed by the client: do not start writing (and leak nothing).
 * @param {import('node:http').ServerResponse} res
 */
export function isGone(res) {
  return res.destroyed || Boolean(res.socket?.destroyed);
}

/** @param {number | null} fd */
function closeFd(fd) {
  if (fd !== null) fs.close(fd, () => {});
}

/**
 * Plain-text status response (404, 400, 405, ...) with no user data in the body.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string[]} [extra] more header name/value pairs
 */
export function endWith(req, res, status, extra = []) {
  const body = `${STATUS_CODES[status] ?? 'Error'}\n`;
  res.writeHead(status, [
    ...extra, 'Content-Type', 'text/plain; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body)),
    'X-Content-Type-Options', 'nosniff', 'Content-Security-Policy', "default-src 'none'",
  ]);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * The header array with a user-set or earlier-middleware header left in place and Vary merged.
 * @param {import('node:http').ServerResponse} res
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
 * @param {import('node:http').ServerResponse} res
 * @param {import("./options.js").SetHeaders | null} hook
 */
function needsMerge(res, hook) {
  return hook || res.hasHeader('vary') || res.hasHeader('content-type') || res.hasHeader('etag') ||
    res.hasHeader('cache-control') || res.hasHeader('last-modified');
}

/**
 * The header arrays and validators of `rep` for this response: the setHeaders hook runs first,
 * then what it (or an earlier middleware) set wins over ours and Vary is appended. In the common
 * case (no hook, nothing set before, both validators on) that is `rep` itself: nothing is built.
 * @returns {{ head: string[], head304: string[], etag?: string, lastModified?: string }}
 * @param {import('node:http').ServerResponse} res
 * @param {{ path: string }} entry
 * @param {import('./table.js').Rep} rep
 * @param {Readonly<import("./options.js").ServeOptions>} opts
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
 * A 412 or 416 passed to `next(err)` as express.static passes them (an http-errors object): the
 * response keeps the representation's metadata headers, as send leaves them, for the error
 * handler's answer.
 * @param {import('node:http').ServerResponse} res
 * @param {string[]} head
 * @param {number} status
 * @param {(err?: unknown) => void} next
 * @param {Record<string, string>} extra
 */
function rejectWith(res, head, status, next, extra) {
  for (let i = 0; i < head.length; i += 2) {
    if (head[i] !== 'Content-Length' && head[i] !== 'Content-Encoding') res.setHeader(head[i], head[i + 1]);
  }
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  next(httpError(status, Object.keys(extra).length > 0 ? { headers: extra } : undefined));
}

/**
 * The request being answered, as the middleware holds it. A 412 or 416 goes to `next(err)` when
 * there is a `next` (even with fallthrough, as express.static), else it is answered here.
 * @typedef {{ req: import('node:http').IncomingMessage & { originalUrl?: string },
 *   res: import('node:http').ServerResponse, next?: (err?: unknown) => void,
 *   s: { opts: Readonly<import('./options.js').ServeOptions> }, p: { rel: string, slash: boolean } | null,
 * }} RequestContext  p: the request's path (null: not parsed, answered as the root's)
 */

/**
 * Answer `c` with `rep` of `entry`: preconditions, then the whole body or a range.
 * @param {RequestContext} c
 * @param {{ path: string, vary: boolean, link?: import('./site-link.js').SiteLink | null }} entry link: the
 *   site dictionary an HTML page links to
 * @param {import('./table.js').Rep} rep
 * @param {number | null} fd open descriptor of rep.file, or null when rep.body is in memory
 * @param {import('node:fs').Stats} [stat] fstat of fd, passed to setHeaders
 */
export function respond(c, entry, rep, fd, stat) {
  const { req, res, s: { opts } } = c;
  const next = typeof c.next === 'function' ? c.next : undefined;
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
      res.writeHead(304, h.head304);
      res.end();
    } else if (next) {
      rejectWith(res, head, 412, next, {});
    } else {
      res.writeHead(412, [...varyHead(res, entry), 'Content-Length', '0']);
      res.end();
    }
    return;
  }
  const r = opts.acceptRanges && req.headers.range !== undefined ? evaluateRange(req.headers, rep.size, h) : null;
  if (r?.kind === 'unsatisfiable') {
    closeFd(fd);
    const contentRange = `bytes */${rep.size}`;
    if (next) return rejectWith(res, head, 416, next, { 'Content-Range': contentRange });
    res.writeHead(416, [
      ...varyHead(res, entry), 'Accept-Ranges', 'bytes', 'Content-Range', contentRange, 'Content-Length', '0',
    ]);
    res.end();
    return;
  }
  if (r?.kind === 'partial') return sendBytes(c, rep, fd, stat, 206, rangeHead(head, r, rep.size), r.start, r.end);
  sendBytes(c, rep, fd, stat, status, head, 0, rep.size - 1);
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
 * Write the head and bytes [start, end] of the representation (none for HEAD), from memory or fd.
 * @param {RequestContext} c
 * @param {import('./table.js').Rep} rep
 * @param {number | null} fd
 * @param {fs.Stats | undefined} stat
 * @param {number} status
 * @param {number} start
 * @param {number} end
 * @param {string[]} head
 */
function sendBytes(c, rep, fd, stat, status, head, start, end) {
  const { req, res } = c;
  const length = end - start + 1;
  res.writeHead(status, head);
  if (req.method === 'HEAD' || length <= 0) {
    closeFd(fd);
    res.end();
  } else if (rep.body !== null) {
    res.end(status === 206 ? rep.body.subarray(start, end + 1) : rep.body);
  } else {
    streamFd(res, /** @type {number} */ (fd), start, end, length, stat);
  }
}

/**
 * Stream bytes [start, end] of an open descriptor into the response. The descriptor is closed
 * when the stream ends, fails, or the client goes away. If the file shrank under us, fewer bytes
 * than Content-Length arrive and the connection is destroyed instead of ending a short response.
 * When `stat` (the fstat taken before the headers) is given, the last chunk is held back until a
 * second fstat shows the same size and mtime: a file rewritten in place while it was read
 * (whose bytes may mix two versions) gets its connection destroyed before the body is complete,
 * so no client ever takes a short or mixed body as complete.
 * @param {import('node:http').ServerResponse} res
 * @param {number} fd
 * @param {number} start
 * @param {number} end
 * @param {number} length
 * @param {import('node:fs').Stats} [stat]
 */
export function streamFd(res, fd, start, end, length, stat) {
  // autoClose off: the descriptor must stay open for the last fstat; rs.destroy() closes it (after
  // any read in flight) on every path.
  const rs = fs.createReadStream('', { fd, start, end, autoClose: false, highWaterMark: STREAM_CHUNK });
  let sent = 0;
  let finished = false;
  const finish = (/** @type {Buffer | null} */ last) => {
    finished = true;
    rs.destroy();
    if (last) res.end(last);
    else res.destroy();
  };
  res.on('close', () => {
    if (!finished) finish(null);
  });
  res.on('drain', () => rs.resume());
  rs.on('data', (chunk) => {
    sent += chunk.length;
    if (sent < length) {
      if (!res.write(chunk)) rs.pause();
      return;
    }
    rs.pause();
    if (!stat) return finish(/** @type {Buffer} */ (chunk));
    fs.fstat(fd, (err, now) => {
      if (finished) return;
      // Not ctime: replacing the file by rename (which cannot mix versions) changes the old inode's ctime.
      const same = !err && now.size === stat.size && now.mtimeMs === stat.mtimeMs;
      finish(same ? /** @type {Buffer} */ (chunk) : null);
    });
  });
  rs.on('end', () => {
    if (!finished && sent < length) finish(null);
  });
  rs.on('error', () => {
    if (!finished) finish(null);
  });
}
