import { Readable } from 'node:stream';
import { normalizeServeOptions } from '../http/index.js';
import { decide } from '../core/index.js';
import { httpError, statusReply } from '../http/index.js';
import { Site } from '../site/index.js';
import { fileChunks } from './file-chunks.js';
import { whenSending } from './socket-turn.js';

/**
 * `precompressor/fastify`: the serving core (core.js) as a Fastify plugin. It owns a GET/HEAD
 * wildcard route under the plugin's prefix, so the app's own routes win; a path that is not ours
 * goes to the app's not-found handler. Replies go through Fastify's reply, its hooks included.
 */

/** Options of Fastify's own that `register` passes along with ours. */
const FASTIFY_KEYS = ['prefix', 'logLevel', 'logSerializers'];

/**
 * @typedef {import('fastify').FastifyReply} Reply
 * @typedef {import('../core/index.js').Call<
 *   { reply: Reply, resolve: (v?: unknown) => void, reject: (e: unknown) => void },
 *   import('../http/index.js').RequestInfo, import('../http/index.js').ResponseHeaders & { reply: Reply }>} FastifyCall
 */

/**
 * `app.register(precompressor, { root, ...serveStatic options })`.
 * @param {import('fastify').FastifyInstance} fastify
 * @param {import('../../types.js').FastifyPrecompressorOptions} options
 */
export async function precompressor(fastify, options) {
  const { root, ...rest } = /** @type {Record<string, any>} */ (options ?? {});
  for (const key of FASTIFY_KEYS) delete rest[key];
  const s = new Site(normalizeServeOptions(root, rest));
  fastify.addHook('onClose', async () => s.close());
  const prefix = fastify.prefix;
  fastify.route({
    method: ['GET', 'HEAD'],
    url: '/*',
    handler(request, reply) {
      const raw = request.raw.url ?? '/';
      const url = raw.slice(prefix.length);
      const req = { method: request.method, url: url.startsWith('/') ? url : `/${url}`, originalUrl: raw,
        headers: request.headers };
      // a pipelined request waits for its turn on the socket before a file is opened (socket-turn.js)
      return new Promise((resolve, reject) => whenSending(request.raw, reply.raw, () => {
        decide(/** @type {FastifyCall} */ ({ s, req, res: headersOf(reply), gone, done, x: { reply, resolve, reject },
          p: null }));
      }));
    },
  });
}

/**
 * The reply's headers as the core reads and sets them.
 * @param {Reply} reply
 */
function headersOf(reply) {
  return {
    reply,
    get statusCode() {
      return reply.statusCode;
    },
    getHeader: (/** @type {string} */ name) => reply.getHeader(name),
    hasHeader: (/** @type {string} */ name) => reply.hasHeader(name),
    setHeader: (/** @type {string} */ name, /** @type {any} */ value) => reply.header(name, value),
    removeHeader: (/** @type {string} */ name) => void reply.removeHeader(name),
  };
}

/** @param {{ reply: Reply }} res */
function gone({ reply }) {
  return reply.raw.destroyed || Boolean(reply.raw.socket?.destroyed);
}

/**
 * Carry out a decision through Fastify's reply: what is not ours goes to the not-found handler
 * (with fallthrough), a system error to the error handler (status 500).
 * @param {import('../http/index.js').Decision} d
 * @param {FastifyCall} c
 */
function done(d, c) {
  const { x: { reply, resolve, reject }, req } = c;
  const { fallthrough } = c.s.opts;
  switch (d.kind) {
    case 'reply': return resolve(send(reply, d));
    case 'pass':
      if (fallthrough) return resolve(reply.callNotFound());
      return resolve(send(reply, statusReply(d.status, req.method ?? 'GET')));
    case 'method': return resolve(fallthrough ? reply.callNotFound() : send(reply, d.reply));
    case 'reject': return resolve(send(reply, d.reply));
    case 'error': return reject(httpError(500, d.error));
    case 'gone':
      reply.hijack();
      return resolve(undefined);
  }
}

/**
 * @param {Reply} reply
 * @param {import('../http/index.js').Reply} r
 */
function send(reply, r) {
  reply.code(r.status);
  for (let i = 0; i < r.head.length; i += 2) reply.header(r.head[i], r.head[i + 1]);
  const { body } = r;
  if (body === null) return reply.send();
  return reply.send('fd' in body ? Readable.from(fileChunks(body), { objectMode: false }) : body);
}
export default precompressor;
