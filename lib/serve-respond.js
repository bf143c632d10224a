import fs from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { appendVary } from './serve-table.js';
import { evaluatePreconditions, evaluateRange } from './serve-http.js';

/**
 * Writing one response for a selected representation: setHeaders hook, header merge, 412/304,
 * Range (206/416, on the selected representation's bytes), HEAD, body from memory or from an
 * already opened and fstat-checked file descriptor. Every path closes the descriptor.
 */

/** Headers that `setHeaders` (or an earlier middleware) may set and we then leave alone, like send. */
const OVERRIDABLE = new Set(['Content-Type', 'ETag', 'Cache-Control', 'Last-Modified']);
const CONTENT_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-range', 'content-language'];

/** Response already closed by the client: do not start writing (and leak nothing). */
export function isGone(res) {
  return res.destroyed || Boolean(res.socket?.destroyed);
}

function closeFd(fd) {
  if (fd !== null) fs.close(fd, () => {});
}

/** Plain-text status response (404, 400, 405, ...) with no user data in the body. */
export function endWith(req, res, status, extra = []) {
  const body = `${STATUS_CODES[status] ?? 'Error'}\n`;
  res.writeHead(status, [
    ...extra, 'Content-Type', 'text/plain; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body)),
    'X-Content-Type-Options', 'nosniff', 'Content-Security-Policy', "default-src 'none'",
  ]);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The header array with a user-set or earlier-middleware header left in place and Vary merged. */
function merge(res, head) {
  const out = [];
  for (let i = 0; i < head.length; i += 2) {
    const name = head[i];
    if (name === 'Vary') out.push(name, appendVary(res.getHeader('vary')));
    else if (!(OVERRIDABLE.has(name) && res.hasHeader(name))) out.push(name, head[i + 1]);
  }
  return out;
}

function needsMerge(res, hook) {
  return hook || res.hasHeader('vary') || res.hasHeader('content-type') || res.hasHeader('etag') ||
    res.hasHeader('cache-control') || res.hasHeader('last-modified');
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {{ path: string, vary: boolean }} entry
 * @param {import('./serve-table.js').Rep} rep
 * @param {number | null} fd open descriptor of rep.file, or null when rep.body is in memory
 * @param {Readonly<import('./serve-options.js').ServeOptions>} opts
 * @param {import('node:fs').Stats} [stat] fstat of fd, passed to setHeaders
 */
export function respond(req, res, entry, rep, fd, opts, stat) {
  let head = rep.head;
  let head304 = rep.head304;
  let etag = opts.etag ? rep.etag : undefined;
  let lastModified = opts.lastModified ? rep.lastModified : undefined;
  if (opts.setHeaders) opts.setHeaders(res, entry.path, stat ?? rep.stat, rep.encoding);
  if (needsMerge(res, opts.setHeaders)) {
    head = merge(res, head);
    head304 = merge(res, head304);
    const userEtag = res.getHeader('etag');
    if (userEtag !== undefined) etag = String(userEtag);
    const userLm = res.getHeader('last-modified');
    if (userLm !== undefined) lastModified = String(userLm);
  }
  const vary = entry.vary ? ['Vary', appendVary(res.getHeader('vary'))] : [];

  const pre = evaluatePreconditions(req.headers, { etag, lastModified });
  if (pre !== 200) {
    closeFd(fd);
    if (pre === 304) {
      for (const h of CONTENT_HEADERS) if (res.hasHeader(h)) res.removeHeader(h);
      res.writeHead(304, head304);
      res.end();
    } else {
      res.writeHead(412, [...vary, 'Content-Length', '0']);
      res.end();
    }
    return;
  }

  const size = rep.size;
  let status = 200;
  let start = 0;
  let end = size - 1;
  if (opts.acceptRanges && req.headers.range !== undefined) {
    const r = evaluateRange(req.headers, size, { etag, lastModified });
    if (r.kind === 'unsatisfiable') {
      closeFd(fd);
      res.writeHead(416, [...vary, 'Accept-Ranges', 'bytes', 'Content-Range', `bytes */${size}`, 'Content-Length', '0']);
      res.end();
      return;
    }
    if (r.kind === 'partial') {
      status = 206;
      start = r.start;
      end = r.end;
      head = [...head, 'Content-Range', `bytes ${start}-${end}/${size}`];
      head[head.indexOf('Content-Length') + 1] = String(end - start + 1);
    }
  }
  const length = end - start + 1;
  if (req.method === 'HEAD' || length === 0) {
    closeFd(fd);
    res.writeHead(status, head);
    res.end();
    return;
  }
  if (rep.body !== null) {
    res.writeHead(status, head);
    res.end(status === 206 ? rep.body.subarray(start, end + 1) : rep.body);
    return;
  }
  res.writeHead(status, head);
  streamFd(res, /** @type {number} */ (fd), start, end, length);
}

/**
 * Stream bytes [start, end] of an open descriptor into the response. The descriptor is closed
 * when the stream ends, fails, or the client goes away. If the file shrank under us (written in
 * place after the fstat), fewer bytes than Content-Length arrive: the connection is destroyed
 * instead of ending a short response, so no client ever takes a truncated body as complete.
 */
export function streamFd(res, fd, start, end, length) {
  const rs = fs.createReadStream('', { fd, start, end, autoClose: true });
  let sent = 0;
  let done = false;
  const onClose = () => {
    if (!done) rs.destroy();
  };
  res.on('close', onClose);
  rs.on('data', (chunk) => {
    sent += chunk.length;
  });
  rs.on('end', () => {
    done = true;
    if (sent === length) res.end();
    else res.destroy();
  });
  rs.on('error', () => {
    done = true;
    rs.destroy();
    res.destroy();
  });
  rs.pipe(res, { end: false });
}
