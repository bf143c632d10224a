import fs from 'node:fs';
import { normalizeServeOptions } from '../http/index.js';
import { decide } from '../core/index.js';
import { httpError, statusReply } from '../http/index.js';
import { Site } from '../site/index.js';
import { fileChunks } from './file-chunks.js';
import { withControls } from './controls.js';
import { SMALL_BODY } from '../bodies/index.js';

/**
 * `precompressor/fetch`: the serving core (core.js) as a Web fetch handler, for Hono, Bun.serve,
 * Deno.serve and anything that speaks Request/Response. A request that is not ours resolves to
 * undefined, so the app goes on; a file range is a ReadableStream over its checked descriptor.
 */

/**
 * The response headers a request collects before its reply: those `setHeaders` (or the SPA's
 * Vary) sets; the reply's own head then replaces the names it carries, as node's writeHead() does.
 */
class HeaderBag {
  statusCode = 200;
  /** @type {Map<string, { name: string, value: number | string | readonly string[] }>} */
  map = new Map();

  /** @param {Request} request its signal is read only when a file is opened (Deno warns on reading it) */
  constructor(request) {
    this.request = request;
  }

  /** @param {string} name */
  getHeader(name) {
    const v = this.map.get(name.toLowerCase())?.value;
    return Array.isArray(v) ? [...v] : /** @type {number | string | undefined} */ (v);
  }

  /** @param {string} name */
  hasHeader(name) {
    return this.map.has(name.toLowerCase());
  }

  /**
   * @param {string} name
   * @param {number | string | readonly string[]} value
   */
  setHeader(name, value) {
    this.map.set(name.toLowerCase(), { name, value });
    return this;
  }

  /** @param {string} name */
  removeHeader(name) {
    this.map.delete(name.toLowerCase());
  }
}

/**
 * @typedef {import('../http/index.js').RequestInfo} RequestInfo
 * @typedef {{ resolve: (r: Response | Promise<Response> | undefined) => void, reject: (e: unknown) => void }} Settle
 * @typedef {import('../core/index.js').Call<Settle, RequestInfo, HeaderBag>} FetchCall
 */

/**
 * A Web fetch handler serving `root` as serveStatic does.
 * @param {string} root
 * @param {import('../../types.js').AdapterServeOptions | null} [options]
 * @returns {import('../../types.js').FetchHandler}
 */
export function fetchHandler(root, options = {}) {
  const s = new Site(normalizeServeOptions(root, /** @type {any} */ (options)));
  /** @type {any} */
  const handler = (/** @type {Request} */ request) => new Promise((resolve, reject) => {
    /** @type {RequestInfo['headers']} */
    const headers = {};
    for (const [name, value] of request.headers) headers[name] = value;
    const res = new HeaderBag(request);
    decide(/** @type {FetchCall} */ ({
      s, req: { method: request.method, url: request.url, headers }, res, gone, done, x: { resolve, reject }, p: null,
    }));
  });
  return withControls(handler, s);
}

/** @param {HeaderBag} res */
function gone(res) {
  return res.request.signal?.aborted === true;
}

/**
 * Resolve a decision: a Response, undefined for what is not ours (with fallthrough), a rejection
 * for a system error (status 500, as next(err) gets it) or an aborted request.
 * @param {import('../http/index.js').Decision} d
 * @param {FetchCall} c
 */
function done(d, c) {
  const { x: { resolve, reject }, req } = c;
  const { fallthrough } = c.s.opts;
  switch (d.kind) {
    case 'reply': return resolve(toResponse(c, d));
    case 'pass': return resolve(fallthrough ? undefined : toResponse(c, statusReply(d.status, req.method ?? 'GET')));
    case 'method': return resolve(fallthrough ? undefined : toResponse(c, d.reply));
    case 'reject': return resolve(toResponse(c, d.reply));
    case 'error': return reject(httpError(500, d.error));
    case 'gone': return reject(c.res.request.signal?.reason ?? new Error('The request was aborted'));
  }
}

/**
 * The Response of a reply: the headers set before, then the reply's own over them.
 * @param {FetchCall} c
 * @param {import('../http/index.js').Reply} r
 * @returns {Response | Promise<Response>}
 */
function toResponse(c, r) {
  const headers = new Headers();
  for (const { name, value } of c.res.map.values()) {
    for (const v of [value].flat()) headers.append(name, String(v));
  }
  for (let i = 0; i < r.head.length; i += 2) headers.delete(r.head[i]);
  for (let i = 0; i < r.head.length; i += 2) headers.append(r.head[i], r.head[i + 1]);
  const { body } = r;
  const empty = c.req.method === 'HEAD' || r.status === 304 || r.status === 204;
  if (body !== null && 'fd' in body) {
    if (empty) fs.close(body.fd, () => {});
    // a small range is read whole: its Content-Length then holds on every server (Bun's drops it from a stream)
    else if (body.end - body.start < SMALL_BODY) return whole(body, r.status, headers);
    else return new Response(fileStream(body), { status: r.status, headers });
  }
  // a Buffer is a Uint8Array, which BodyInit takes (its @types ask for one over an ArrayBuffer)
  const bytes = empty || body === null ? null : /** @type {Uint8Array<ArrayBuffer>} */ (body);
  return new Response(bytes, { status: r.status, headers });
}

/**
 * A Response with the whole of a file range as its body.
 * @param {import('../http/index.js').FileRange} range
 * @param {number} status
 * @param {Headers} headers
 */
async function whole(range, status, headers) {
  const parts = [];
  for await (const chunk of fileChunks(range)) parts.push(chunk);
  return new Response(/** @type {Uint8Array<ArrayBuffer>} */ (Buffer.concat(parts)), { status, headers });
}

/**
 * A file range as a byte stream; cancelling it (the client went away) closes the descriptor.
 * @param {import('../http/index.js').FileRange} range
 */
function fileStream(range) {
  const chunks = fileChunks(range);
  return new ReadableStream({
    async pull(controller) {
      const { value, done: over } = await chunks.next();
      if (over) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await chunks.return();
    },
  }, { highWaterMark: 0 });
}
