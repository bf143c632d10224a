// examples/fastify.js: serveStatic through @fastify/middie; what it does not serve reaches the routes
import Fastify from 'fastify';
import middie from '@fastify/middie';
import { serveStatic } from 'precompressor';

const app = Fastify();
await app.register(middie);
app.use(serveStatic('dist'));
app.get('/api/hello', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`http://127.0.0.1:${app.server.address().port}/`);
