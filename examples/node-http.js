// examples/node-http.js: misses get 404, malformed paths 400, `..` 403, other methods 405
import http from 'node:http';
import { serveStatic } from 'precompressor';

const files = serveStatic('dist');
const server = http.createServer((req, res) => files(req, res));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/`);
});
