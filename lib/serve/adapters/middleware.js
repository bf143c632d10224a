import fs from 'node:fs';
import { normalizeServeOptions } from '../http/index.js';
import { decide, hotOf } from '../core/index.js';
import { httpError, statusReply } from '../http/index.js';
import { HotReps, Site } from '../site/index.js';
import { waitsForTurn, whenSending } from './socket-turn.js';
import { withControls } from './controls.js';

/**
 * serveStatic: the serving core on node:http and connect-style middleware; this adapter only writes
 * the core's decisions.
 */

/** Bytes per read of a streamed file: fewer trips through libuv's pool (docs/benchmarks.md, "Serving"). */
const STREAM_CHUNK = 512 * 1024;

/**
 * @typedef {import('node:http').IncomingMessage & { originalUrl?: string }} Req
 * @typedef {import('node:http').ServerResponse} Res
 * @typedef {((err?: unknown) => void) | undefined} Next
 */

/**
 * A drop-in for `express.static(root, options)` that sends the manifest's precompressed variants;
 * its exceptions are in the README, pinned by test/serve/dropin.test.js. A file that no longer
 * matches the manifest is served as itself, never as a variant (docs/guarantees.md).
 *
 * @param {string} root
 * @param {import('../../types.js').ServeOptions | null} [options]
 * @returns {import('../../types.js').ServeStaticMiddleware}
 */
export function serveStatic(root, options = {}) {
  const s = new Site(normalizeServeOptions(root, options));
  s.hot = new HotReps(); // its answers written by sendHot()
  /** @type {any} */
  const middleware = (/** @type {Req} */ req, /** @type {Res} */ res, /** @type {Next} */ next) => {
    // a request answered before as this one will be: no decision made again (lib/serve/core/hot.js);
    // a response waiting for its socket's turn (pipelined) or with its head sent goes the whole way
    const hot = !res.headersSent && !waitsForTurn(req, res) ? hotOf(s, req, res) : null;
    if (hot !== null) return sendHot(req, res, hot.head, /** @type {Buffer} */ (hot.rep.body));
    const x = typeof next === 'function' ? next : undefined;
    whenSending(req, res, decide, { s, req, res, gone: isGone, done: write, x, p: null });
  };
  return withControls(middleware, s);
}

/**
 * Send a remembered answer, as writeReply() sends the slow path's reply.
 * @param {Req} req
 * @param {Res} res
 * @param {string[]} head
 * @param {Buffer} body
 */
function sendHot(req, res, head, body) {
  res.writeHead(200, onExpress4(req) ? express4Head(head) : head);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * @param {Res} res
 */
export function isGone(res) {
  return res.destroyed || Boolean(res.socket?.destroyed);
}

/**
 * Carry out a decision on (req, res, next). Without `next`, what is not ours gets its status, and
 * a 412/416 its own reply; with it, as express.static: next() (fallthrough) or next(err).
 * @param {import('../http/index.js').Decision} d
 * @param {import('../core/index.js').Call<Next, Req, Res>} c
 * @returns {void}
 */
function write(d, c) {
  const { req, res, x: next } = c;
  const { fallthrough } = c.s.opts;
  switch (d.kind) {
    case 'reply': return writeReply(c, d);
    case 'pass':
      if (next) return fallthrough ? next() : next(httpError(d.status, d.cause));
      return writeReply(c, statusReply(d.status, req.method ?? 'GET'));
    case 'method': return fallthrough && next ? next() : writeReply(c, d.reply);
    case 'reject':
      if (!next) return writeReply(c, d.reply);
      for (let i = 0; i < d.head.length; i += 2) res.setHeader(d.head[i], d.head[i + 1]);
      for (const [k, v] of Object.entries(d.headers)) res.setHeader(k, v);
      return next(httpError(d.status, Object.keys(d.headers).length > 0 ? { headers: d.headers } : undefined));
    case 'error':
      if (next) return next(httpError(500, d.error));
      if (!res.headersSent) return writeReply(c, statusReply(500, req.method ?? 'GET'));
      res.destroy();
      break;
    case 'gone': break;
  }
}

/**
 * Write a reply's head and body; a head node refuses (a bad header from setHeaders) is a 500.
 * @param {import('../core/index.js').Call<Next, Req, Res>} c
 * @returns {void}
 * @param {import('../http/index.js').Reply} r
 */
function writeReply(c, r) {
  const { res } = c;
  const { body } = r;
  try {
    res.writeHead(r.status, onExpress4(c.req) ? express4Head(r.head) : r.head);
  } catch (e) {
    if (body !== null && 'fd' in body) fs.close(body.fd, () => {});
    return write({ kind: 'error', error: /** @type {Error} */ (e) }, c);
  }
  if (body === null || !('fd' in body)) res.end(body ?? undefined);
  else streamFd(res, body.fd, body.start, body.end, body.end - body.start + 1, body.stat);
}

/** @type {WeakMap<object, boolean>} */
const express4Apps = new WeakMap();

/**
 * Is this request's app Express 4, whose express.static writes `charset=UTF-8`? Its app holds
 * `_router` once a middleware is mounted; Express 5's never does.
 * @param {Req} req
 */
function onExpress4(req) {
  const app = /** @type {{ app?: unknown }} */ (req).app;
  if (typeof app !== 'function') return false;
  let is = express4Apps.get(app);
  if (is === undefined) express4Apps.set(app, (is = Object.hasOwn(app, '_router')));
  return is;
}

/**
 * A head with Express 4's charset casing in its Content-Type.
 * @param {string[]} head
 */
function express4Head(head) {
  const i = head.indexOf('Content-Type');
  if (i === -1 || (i & 1) === 1 || !head[i + 1].endsWith('charset=utf-8')) return head;
  const out = [...head];
  out[i + 1] = `${head[i + 1].slice(0, -'utf-8'.length)}UTF-8`;
  return out;
}

/**
 * Stream bytes [start, end] of an open descriptor into the response, then close it. A file that shrank
 * or, with `stat`, was rewritten in place meanwhile (a second fstat before the last chunk) has its
 * connection destroyed: no client takes a short or mixed body as complete.
 * @param {Res} res
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
