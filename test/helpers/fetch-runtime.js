// precompressor/fetch on the server of the runtime that runs this file (Bun.serve or Deno.serve),
// for test/serve/fetch-runtimes.test.js: `<runtime> fetch-runtime.js <dir>` prints its port, then
// answers what fetchHandler does not with the app's own route or its 404.
import process from 'node:process';
import { fetchHandler } from '../../lib/serve/adapters/fetch.js';

const files = fetchHandler(process.argv.at(-1));
const app = async (/** @type {Request} */ request) => (await files(request)) ??
  (new URL(request.url).pathname === '/api/hello'
    ? new Response('hello from the app')
    : new Response('the app has no such page', { status: 404 }));
const g = /** @type {any} */ (globalThis);
if (g.Bun) console.log(g.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: app }).port);
else g.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(port) }, app);
