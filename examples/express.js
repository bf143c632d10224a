// examples/express.js: Express 4 or 5; run `precompressor dist` and `precompressor public` first
import path from 'node:path';
import express from 'express';
import { serveStatic } from 'precompressor';

const immutable = `${path.sep}assets${path.sep}`; // Vite's hashed file names: their content never changes
const app = express();
app.use(serveStatic('dist', {
  // A year for hashed assets; index.html and the rest are revalidated (ETag), so a deploy shows at once.
  setHeaders(res, file) {
    if (file.includes(immutable)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  },
}));
app.use('/static', serveStatic('public')); // mounted: redirects keep the /static prefix
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/`); // this machine only: host '0.0.0.0' for all
});
