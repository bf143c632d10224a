// examples/hono.js: precompressor/fetch in Hono on node; what it does not serve (undefined) goes on to the routes
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { fetchHandler } from 'precompressor/fetch';

const files = fetchHandler('dist');
const app = new Hono();
app.use(async (c, next) => (await files(c.req.raw)) ?? next());
app.get('/api/hello', (c) => c.json({ hello: 'world' }));
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`http://127.0.0.1:${info.port}/`);
});
