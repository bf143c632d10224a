import fs from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { appendVary, varyHead } from './table.js';
import { evaluatePreconditions, evaluateRange } from './conditional.js';

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
    if (name === 'Vary') out.push(name, appendVary(res.getHeader('vary'), head[i + 1]));
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
 * @param {import('./table.js').Rep} rep
 * @param {number | null} fd open descriptor of rep.file, or null when rep.body is in memory
 * @param {Readonly<import('./options.js').ServeOptions>} opts
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
  const pre = evaluatePreconditions(req.headers, { etag, lastModified });
  if (pre !== 200) {
    closeFd(fd);
    if (pre === 304) {
      for (const h of CONTENT_HEADERS) if (res.hasHeader(h)) res.removeHeader(h);
      res.writeHead(304, head304);
      res.end();
    } else {
      res.writeHead(412, [...varyHead(res, entry), 'Content-Length', '0']);
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
      res.writeHead(416, [...varyHead(res, entry), 'Accept-Ranges', 'bytes', 'Content-Range', `bytes */${size}`, 'Content-Length', '0']);
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
  streamFd(res, /** @type {number} */ (fd), start, end, length, stat);
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
  const rs = fs.createReadStream('', { fd, start, end, autoClose: false });
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
