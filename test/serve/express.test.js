import fs from 'node:fs/promises';
import express5 from 'express';
import express4 from 'express4';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { makeSite, listen, request, decode } from '../helpers/serve-site.js';

const JS = 'export const answer = 42;\n'.repeat(400);
let site;
const closers = [];
beforeAll(async () => {
  site = await makeSite({ 'app.js': JS, 'docs/index.html': '<p>docs</p>'.repeat(20) });
});
afterAll(async () => {
  for (const c of closers) await c();
  await fs.rm(site.dir, { recursive: true, force: true });
});

async function start(build) {
  const mws = [];
  const make = (opts) => {
    const mw = serveStatic(site.dir, { watch: false, ...opts });
    mws.push(mw);
    return mw;
  };
  const srv = await listen(build(make));
  closers.push(async () => {
    for (const m of mws) m.close();
    await srv.close();
  });
  return (p, headers = {}, method = 'GET') => request(srv.port, p, { headers, method });
}

const FRAMEWORKS = [
  ['Express 4', express4],
  ['Express 5', express5],
  ['node:http', null],
];

describe.each(FRAMEWORKS)('%s', (name, express) => {
  /** An app: Vary: Origin set upstream, static at / and /static, a POST route and a custom 404. */
  const build = (make) => {
    if (!express) {
      const mw = make({});
      return (req, res) => {
        res.setHeader('Vary', 'Origin');
        mw(req, res, () => {
          res.statusCode = 404;
          res.end('custom 404');
        });
      };
    }
    const app = express();
    app.use((req, res, next) => {
      res.setHeader('Vary', 'Origin');
      next();
    });
    app.use(make({}));
    app.use('/static', make({ maxAge: '1d' }));
    app.use('/strict', make({ fallthrough: false }));
    app.post('/app.js', (req, res) => res.send('posted'));
    app.use((req, res) => res.status(404).send('custom 404'));
    // eslint-disable-next-line no-unused-vars
    app.use((err, req, res, next) => res.status(err.status ?? 500).send(`error ${err.status}`));
    return app;
  };
  let get;
  beforeAll(async () => {
    get = await start(build);
  });

  test('serves the br variant with exact headers; Vary appended to the upstream one', async () => {
    const r = await get('/app.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    // Express 4's express.static writes the charset in upper case; serveStatic does the same there
    expect(r.headers['content-type']).toBe(`text/javascript; charset=${name === 'Express 4' ? 'UTF-8' : 'utf-8'}`);
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(r.headers.vary).toBe('Origin, Accept-Encoding');
    expect(decode(r).toString()).toBe(JS);
    if (express) expect(r.headers['x-powered-by']).toBe('Express');
  });

  test('HEAD, 304 and Range', async () => {
    const head = await get('/app.js', { 'accept-encoding': 'gzip' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-encoding']).toBe('gzip');
    const r304 = await get('/app.js', { 'accept-encoding': 'gzip', 'if-none-match': head.headers.etag });
    expect(r304.status).toBe(304);
    expect(r304.headers.vary).toBe('Origin, Accept-Encoding');
    const part = await get('/app.js', { range: 'bytes=0-5' });
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe(JS.slice(0, 6));
  });

  test('a miss falls through to the next handler, with no header leaked', async () => {
    const r = await get('/missing.js', { 'accept-encoding': 'br' });
    expect(r.status).toBe(404);
    expect(r.body.toString()).toBe('custom 404');
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.headers.vary).toBe('Origin');
  });

  test('folder redirect keeps the path', async () => {
    const r = await get('/docs');
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe('/docs/');
  });

  if (!express) return;

  test('POST falls through to the route (fallthrough: true)', async () => {
    const r = await get('/app.js', { 'accept-encoding': 'br' }, 'POST');
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('posted');
    expect(r.headers['content-encoding']).toBeUndefined();
  });

  test('mounted under /static: served, and the redirect includes the mount path', async () => {
    const r = await get('/static/app.js', { 'accept-encoding': 'br' });
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers['cache-control']).toBe('public, max-age=86400');
    expect((await get('/static/docs')).headers.location).toBe('/static/docs/');
    // the mount point itself, without its slash (manifest mode: the table knows the root has files)
    const mount = await get('/static?v=1');
    expect([mount.status, mount.headers.location]).toEqual([301, '/static/?v=1']);
    expect(mount.body.toString()).toContain('Redirecting to /static/?v=1');
    expect(decode(await get('/static/docs/', { 'accept-encoding': 'gzip' })).toString()).toContain('<p>docs</p>');
  });

  test('fallthrough: false → next(err) with status 404/400 (http-errors); other methods → 405', async () => {
    const miss = await get('/strict/missing.js');
    expect([miss.status, miss.body.toString()]).toEqual([404, 'error 404']);
    const bad = await get('/strict/%zz');
    expect([bad.status, bad.body.toString()]).toEqual([400, 'error 400']);
    const post = await get('/strict/app.js', {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

test("the manifest's path is answered 404, not passed on: a framework's static handler behind serveStatic (express.static here) would send it", async () => {
  const get = await start((make) => {
    const app = express5();
    app.use(make({}));
    app.use(express5.static(site.dir));
    return app;
  });
  const r = await get('/precompressor-manifest.json');
  expect(r.status).toBe(404);
  expect((await get('/app.js.br')).status).toBe(200); // what is not ours to answer still passes on
});
