// examples/fastify.js: precompressor/fastify; what it does not serve reaches the routes and the not-found handler
import Fastify from 'fastify';
import precompressor from 'precompressor/fastify';

const app = Fastify();
await app.register(precompressor, { root: 'dist' });
app.get('/api/hello', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`http://127.0.0.1:${app.server.address().port}/`);
