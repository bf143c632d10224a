// examples/koa.js: serveStatic in Koa; what it does not serve goes on to Koa's next middleware
import Koa from 'koa';
import { serveStatic } from 'precompressor';

const files = serveStatic('dist');
const app = new Koa();
app.use((ctx, next) => new Promise((resolve, reject) => {
  ctx.respond = false; // serveStatic answers on the raw response...
  ctx.res.statusCode = 200; // (Koa starts every response as a 404, and serveStatic keeps a status set before it)
  files(ctx.req, ctx.res, (err) => {
    ctx.respond = true; // ...or passes it on: Koa goes on, with its 404 back
    ctx.res.statusCode = 404;
    if (err) reject(err);
    else resolve(next());
  });
}));
app.use((ctx) => {
  ctx.status = 404;
  ctx.body = 'not found here';
});
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/`);
});
