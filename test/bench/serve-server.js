// One static server of the serving benchmark, in its own process:
//   node test/bench/serve-server.js <kind> <root> <peer node_modules> <repo root>
// Listens on 127.0.0.1, port 0, and prints one line `{"port":N}` on stdout when ready.
// Kinds are the Node servers of ./serve.js (nginx runs as its own binary).

import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { ceilingHandler, ceilingResponses } from './serve-ceiling.js';

const [kind, root, modules, repoRoot] = process.argv.slice(2);
const peer = createRequire(path.join(path.resolve(modules || '.'), 'bench-entry.js'));
const notFound = (res) => { res.statusCode = 404; res.end('Not found'); };
const lib = (name) => import(pathToFileURL(path.join(repoRoot, 'lib', name)).href);

/** kind → async () => a node:http server, or { port } when the framework listens itself */
const SERVERS = {
  async precompressor() {
    const { serveStatic } = await lib('serve/adapters/middleware.js');
    const mw = serveStatic(root);
    return http.createServer((req, res) => mw(req, res, () => notFound(res)));
  },
  /** `precompressor serve`: the preview server of the CLI (its connection limits, stall watch, pipelining turn). */
  async 'precompressor-serve'() {
    const { startPreview } = await lib('serve/adapters/preview.js');
    const preview = await startPreview({ root, port: 0, host: '127.0.0.1' });
    return { port: preview.server.address().port };
  },
  /** Not a usable server: the most node:http can do with any handler (./serve-ceiling.js). */
  async 'node-http-ceiling'() {
    return http.createServer(ceilingHandler(await ceilingResponses(root, repoRoot), notFound));
  },
  async sirv() {
    const sirv = peer('sirv');
    const handler = (sirv.default ?? sirv)(root, { dev: false, brotli: true, gzip: true, etag: true });
    return http.createServer((req, res) => handler(req, res, () => notFound(res)));
  },
  async 'express-static-gzip'() {
    const express = peer('express');
    const expressStaticGzip = peer('express-static-gzip');
    const app = express();
    app.use(expressStaticGzip(root, { enableBrotli: true, orderPreference: ['br'] }));
    return http.createServer(app);
  },
  async 'fastify-static'() {
    const fastify = peer('fastify');
    const fastifyStatic = peer('@fastify/static');
    const app = (fastify.default ?? fastify)({ logger: false });
    await app.register(fastifyStatic.default ?? fastifyStatic, { root, preCompressed: true });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: app.server.address().port };
  },
  /** precompressor/fastify: the same site through Fastify's reply. */
  async 'precompressor-fastify'() {
    const fastify = peer('fastify');
    const { precompressor } = await lib('serve/adapters/fastify.js');
    const app = (fastify.default ?? fastify)({ logger: false });
    await app.register(precompressor, { root });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: app.server.address().port };
  },
  /** precompressor/fetch in Hono on @hono/node-server: Request in, Response out. */
  async 'precompressor-hono'() {
    const { Hono } = peer('hono');
    const { serve } = peer('@hono/node-server');
    const { fetchHandler } = await lib('serve/adapters/fetch.js');
    const files = fetchHandler(root);
    const app = new Hono();
    app.use(async (c, next) => (await files(c.req.raw)) ?? next());
    return new Promise((resolve) => {
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ port: info.port }));
    });
  },
  async 'express-compression'() {
    const express = peer('express');
    const compression = peer('compression');
    const app = express();
    app.use(compression());
    app.use(express.static(root));
    return http.createServer(app);
  },
};

const make = SERVERS[kind];
if (!make) {
  console.error(`unknown server kind ${kind}; expected one of ${Object.keys(SERVERS).join(', ')}`);
  process.exit(2);
}
const made = await make();
if (made instanceof http.Server) {
  made.keepAliveTimeout = 60_000;
  await new Promise((resolve) => made.listen(0, '127.0.0.1', resolve));
  process.stdout.write(JSON.stringify({ port: made.address().port }) + '\n');
} else {
  process.stdout.write(JSON.stringify({ port: made.port }) + '\n');
}
