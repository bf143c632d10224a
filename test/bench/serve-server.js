// One static server of the serving benchmark, in its own process:
//   node test/bench/serve-server.js <kind> <root> <peer node_modules> <repo root>
// Listens on 127.0.0.1, port 0, and prints one line `{"port":N}` on stdout when ready.
// Kinds are the Node servers of ./serve.js (nginx runs as its own binary).

import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [kind, root, modules, repoRoot] = process.argv.slice(2);
const peer = createRequire(path.join(path.resolve(modules || '.'), 'bench-entry.js'));
const notFound = (res) => { res.statusCode = 404; res.end('Not found'); };

/** kind → async () => a node:http server, or { port } when the framework listens itself */
const SERVERS = {
  async precompressor() {
    const { serveStatic } = await import(pathToFileURL(path.join(repoRoot, 'lib/serve.js')).href);
    const mw = serveStatic(root);
    return http.createServer((req, res) => mw(req, res, () => notFound(res)));
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
