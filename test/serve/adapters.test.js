import fs from 'node:fs/promises';
import fssync from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import http from 'node:http';
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import Fastify from 'fastify';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { fetchHandler } from '../../lib/serve/adapters/fetch.js';
import { precompressor } from '../../lib/serve/adapters/fastify.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';
import { listen, request, decode } from '../helpers/serve-site.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { changed } from '../helpers/changed.js';

// The same HTTP checks for every adapter of the serving core: serveStatic on node:http (the
// reference), precompressor/fetch under Hono on node and on Bun's and Deno's own servers (their
// npm packages, devDependencies), precompressor/fastify. Each serves its own copy of one real build
// (two passes: a deploy delta for the hashed bundle, the site dictionary).

const sha = (b) => crypto.createHash('sha256').update(b).digest('base64');
const JS = 'export const answer = 42;\n'.repeat(400);
const V1 = `${textOf(30_000, 5)} v1`;
const V2 = `${textOf(15_000, 5)} changed ${textOf(30_000, 5).slice(15_000)} v2`;
const BUNDLE = 'assets/index-B2xxxxx1.js';
const APP_ROUTE = 'hello from the app';
const APP_404 = 'the app has no such page';
const encoders = deltaEncoders();
/** What a server in another process has at most to see a change: a regression fails in seconds. */
const WAIT_MS = 15_000;

let work;
let built;
let manifest;
beforeAll(async () => {
  work = await tempDir('pc-adapters-');
  built = path.join(work, 'dist');
  const store = path.join(work, 'store');
  await writeSite(built, 6);
  await writeTree(built, { 'app.js': JS, 'assets/index-A1xxxxx1.js': V1 });
  await precompress(built, { dictionaryStore: store, cache: false });
  await fs.rm(path.join(built, 'assets'), { recursive: true });
  await writeTree(built, { [BUNDLE]: V2 });
  const report = await precompress(built, { dictionaryStore: store, cache: false });
  expect(report.failures).toEqual([]);
  manifest = JSON.parse(await fs.readFile(path.join(built, 'precompressor-manifest.json'), 'utf8'));
}, 120_000);
afterAll(() => fs.rm(work, { recursive: true, force: true }));

/** A copy of the build for one server (mtimes kept to the nanosecond: the manifest records them). */
async function copyOfBuild() {
  const dir = await tempDir('pc-adapter-site-');
  execFileSync('cp', ['-a', `${built}/.`, dir]);
  return dir;
}

const BIN = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));
const RUNTIME_SERVER = fileURLToPath(new URL('../helpers/fetch-runtime.js', import.meta.url));
const RUNTIME_ARGS = { bun: [], deno: ['run', '--allow-all'] };
/** Stops of the runtimes started, each run once more at the end whatever happened to its suite. */
const children = new Set();
afterAll(() => Promise.all([...children].map((close) => close())));

/** Why `runtime` cannot run here, or null when it can (its npm package installs a working binary). */
function runtimeMissing(runtime) {
  try {
    execFileSync(path.join(BIN, runtime), ['--version'], { stdio: 'ignore' });
    return null;
  } catch (err) {
    return `${runtime} did not run from node_modules/.bin (${err.code ?? err.status}): npm ci installs it from the registry`;
  }
}

/**
 * test/helpers/fetch-runtime.js under Bun or Deno, serving `dir`.
 * @param {'bun' | 'deno'} runtime
 * @param {string} dir
 * @returns {Promise<Running>}
 */
function startRuntime(runtime, dir) {
  const child = spawn(path.join(BIN, runtime), [...RUNTIME_ARGS[runtime], RUNTIME_SERVER, dir], {
    cwd: path.dirname(RUNTIME_SERVER), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' },
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const close = async () => {
    child.kill();
    await exited;
  };
  children.add(close);
  return new Promise((resolve, reject) => {
    let out = '';
    // bounded: a runtime that never listens fails here, and is stopped, rather than at the suite's limit
    const timer = setTimeout(() => void close().then(() => reject(new Error(`${runtime} did not listen: ${err}`))), WAIT_MS);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^(\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), close });
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${runtime} exited with ${code} before listening: ${err}`));
    });
  });
}

/**
 * @typedef {{ port: number, close: () => Promise<void> }} Running
 * @type {[string, (dir: string) => Promise<Running>, { inProcess: boolean, skip: string | null }][]}
 */
const SERVERS = [
  ['serveStatic on node:http', async (dir) => {
    const mw = serveStatic(dir);
    const srv = await listen((req, res) => mw(req, res, (err) => {
      if (err) return res.writeHead(err.status, err.headers).end(); // a 412 or 416, as express.static passes them
      const ours = req.url === '/api/hello';
      res.writeHead(ours ? 200 : 404, { 'content-type': 'text/plain' });
      res.end(ours ? APP_ROUTE : APP_404);
    }));
    return { port: srv.port, close: async () => { mw.close(); await srv.close(); } };
  }, { inProcess: true, skip: null }],
  ['precompressor/fetch under Hono on node', async (dir) => {
    const files = fetchHandler(dir);
    const app = new Hono();
    app.use(async (c, next) => (await files(c.req.raw)) ?? next());
    app.get('/api/hello', (c) => c.text(APP_ROUTE));
    app.notFound((c) => c.text(APP_404, 404));
    const { server, port } = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ server: s, port: info.port }));
    });
    return {
      port,
      close: async () => {
        files.close();
        server.closeAllConnections?.();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }, { inProcess: true, skip: null }],
  ['precompressor/fastify', async (dir) => {
    const app = Fastify();
    app.get('/api/hello', async () => APP_ROUTE);
    app.setNotFoundHandler((_req, reply) => reply.code(404).type('text/plain').send(APP_404));
    await app.register(precompressor, { root: dir });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: app.server.address().port, close: () => app.close() };
  }, { inProcess: true, skip: null }],
  ['precompressor/fetch on Bun.serve', (dir) => startRuntime('bun', dir), { inProcess: false, skip: runtimeMissing('bun') }],
  ['precompressor/fetch on Deno.serve', (dir) => startRuntime('deno', dir), { inProcess: false, skip: runtimeMissing('deno') }],
];
for (const [name, , { skip }] of SERVERS) if (skip) console.warn(`${name}: skipped, ${skip}`);

describe.each(SERVERS)('%s', (_name, start, { inProcess, skip }) => {
  if (skip) {
    test.skip(skip, () => {});
    return;
  }
  let dir;
  let srv;
  beforeAll(async () => {
    dir = await copyOfBuild();
    srv = await start(dir);
  }, WAIT_MS + 5000);
  afterAll(async () => {
    await srv?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
  const get = (p, headers = {}, method = 'GET') => request(srv.port, p, { headers, method });

  test.each([['br', 'br'], ['gzip', 'gzip'], ['gzip, br;q=0.5', 'gzip'], [undefined, undefined], ['identity', undefined]])(
    'Accept-Encoding %j → %j, with Vary and the exact length', async (ae, enc) => {
      const r = await get('/app.js', ae === undefined ? {} : { 'accept-encoding': ae });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(enc);
      expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(r.headers.vary).toBe('Accept-Encoding');
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      expect(decode(r).toString()).toBe(JS);
    });

  test('HEAD: the headers of GET, no body', async () => {
    const full = await get('/app.js', { 'accept-encoding': 'br' });
    const head = await get('/app.js', { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    for (const h of ['content-length', 'content-encoding', 'etag', 'vary', 'last-modified']) expect(head.headers[h]).toBe(full.headers[h]);
  });

  test('304 on the ETag of the encoding sent, with Vary; 412 on a failed If-Match', async () => {
    const full = await get('/app.js', { 'accept-encoding': 'br' });
    const cached = await get('/app.js', { 'accept-encoding': 'br', 'if-none-match': full.headers.etag });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
    expect(cached.headers.etag).toBe(full.headers.etag);
    expect(cached.headers.vary).toBe('Accept-Encoding');
    const other = await get('/app.js', { 'accept-encoding': 'gzip', 'if-none-match': full.headers.etag });
    expect(other.status).toBe(200);
    expect((await get('/app.js', { 'if-match': '"nope"' })).status).toBe(412);
  });

  test('ranges: 206 on the bytes of the representation sent, 416 past its end', async () => {
    const part = await get('/app.js', { range: 'bytes=10-19' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${JS.length}`);
    expect(part.body.toString()).toBe(JS.slice(10, 20));
    const br = await get('/app.js', { 'accept-encoding': 'br', range: 'bytes=0-3' });
    const whole = await get('/app.js', { 'accept-encoding': 'br' });
    expect(br.body).toEqual(whole.body.subarray(0, 4));
    const past = await get('/app.js', { range: `bytes=${JS.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${JS.length}`);
  });

  test('a large file streams whole from disk', async () => {
    const r = await get(`/${BUNDLE}`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe(V2);
  });

  test('internals are never served by name: the manifest, variants, deltas', async () => {
    const names = ['precompressor-manifest.json', 'app.js.br', 'app.js.gz'];
    for (const n of await fs.readdir(path.join(dir, 'assets'))) if (/\.dc[bz]$/.test(n)) names.push(`assets/${n}`);
    expect(names.length).toBeGreaterThan(encoders.length > 0 ? 3 : 2);
    for (const n of names) {
      const r = await get(`/${n}`);
      expect(r.status).toBe(404);
      expect(r.body.toString()).not.toBe((await fs.readFile(path.join(dir, n))).toString());
    }
  });

  test("the app's own routes and its not-found answer are still reached", async () => {
    const hello = await get('/api/hello');
    expect(hello.status).toBe(200);
    expect(hello.body.toString()).toBe(APP_ROUTE);
    const missing = await get('/no/such/file.js');
    expect(missing.status).toBe(404);
    expect(missing.body.toString()).toBe(APP_404);
  });

  (encoders.length > 0 ? test : test.skip)('a client that holds the previous bundle gets a delta against it', async () => {
    const r = await get(`/${BUNDLE}`, { 'accept-encoding': 'gzip, br, zstd, dcb, dcz', 'available-dictionary': `:${sha(V1)}:` });
    expect(r.status).toBe(200);
    expect(encoders).toContain(r.headers['content-encoding']);
    expect(r.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['use-as-dictionary']).toBe('match="index-*.js", match-dest=("script")');
    expect(decodeDelta(r.headers['content-encoding'], r.body, Buffer.from(V1)).toString()).toBe(V2);
  });

  (encoders.length > 0 ? test : test.skip)('pages link the site dictionary and are sent against it', async () => {
    const rel = manifest.siteDictionary.path;
    const dict = await fs.readFile(path.join(dir, rel));
    const page = await get('/docs/page-2.html', { 'accept-encoding': 'br' });
    expect(page.headers.link).toBe(`<../${rel}>; rel="compression-dictionary"`);
    const d = await get(`/${rel}`, { 'accept-encoding': 'br' });
    expect(decode(d)).toEqual(dict);
    expect(d.headers['use-as-dictionary']).toBe('match="*", match-dest=("document")');
    const delta = await get('/docs/page-2.html', { 'accept-encoding': 'br, dcb, dcz', 'available-dictionary': `:${sha(dict)}:` });
    expect(encoders).toContain(delta.headers['content-encoding']);
    expect(decodeDelta(delta.headers['content-encoding'], delta.body, dict)).toEqual(await fs.readFile(path.join(dir, 'docs/page-2.html')));
  });

  test('never stale: a file rewritten after the build is sent as it is now, never its old variants', async () => {
    const next = 'console.log("rebuilt");\n'.repeat(50);
    const seen = changed(dir, 'app.js');
    await fs.writeFile(path.join(dir, 'app.js'), next);
    await seen;
    // in this process, our watcher has seen the change when ours has; in another, until it has
    // (bounded), every response is one whole version: the old one with its variants, or the new one
    const deadline = Date.now() + (inProcess ? 0 : WAIT_MS);
    for (;;) {
      const r = await get('/app.js', { 'accept-encoding': 'br' });
      expect(r.status).toBe(200);
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      if (decode(r).toString() === next || Date.now() > deadline) break;
      expect(decode(r).toString()).toBe(JS);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const ae of ['br', 'gzip', undefined]) {
      const r = await get('/app.js', ae ? { 'accept-encoding': ae } : {});
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      expect(r.body.toString()).toBe(next);
    }
  });
});


describe('what each adapter adds', () => {
  let dir;
  beforeAll(async () => {
    dir = await copyOfBuild();
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  test('fetch: fallthrough false answers misses (404), bad paths (400) and other methods (405) itself', async () => {
    const files = fetchHandler(dir, { fallthrough: false, watch: false });
    try {
      const miss = await files(new Request('http://localhost/nope.js'));
      expect([miss?.status, await miss?.text()]).toEqual([404, 'Not Found\n']);
      expect((await files(new Request('http://localhost/a%00b')))?.status).toBe(400);
      const post = await files(new Request('http://localhost/app.js', { method: 'POST', body: 'x' }));
      expect([post?.status, post?.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
      const open = fetchHandler(dir, { watch: false });
      expect(await open(new Request('http://localhost/nope.js'))).toBeUndefined();
      expect(await open(new Request('http://localhost/app.js', { method: 'DELETE' }))).toBeUndefined();
      open.close();
    } finally {
      files.close();
    }
  });

  test('fetch: setHeaders sees the file and sets headers that win; a folder redirects with its query', async () => {
    const seen = [];
    const files = fetchHandler(dir, {
      watch: false,
      setHeaders(headers, file, stat, encoding) {
        seen.push([path.relative(dir, file), stat.size, encoding]);
        headers.setHeader('Cache-Control', 'no-store');
        headers.setHeader('X-Served-By', 'precompressor');
      },
    });
    try {
      const r = await files(new Request('http://localhost/app.js', { headers: { 'accept-encoding': 'br' } }));
      expect(r?.headers.get('cache-control')).toBe('no-store');
      expect(r?.headers.get('x-served-by')).toBe('precompressor');
      expect(seen).toEqual([['app.js', manifest.files['app.js'].variants.br.size, 'br']]);
      const folder = await files(new Request('http://localhost/docs?x=1'));
      expect([folder?.status, folder?.headers.get('location')]).toEqual([301, '/docs/?x=1']);
    } finally {
      files.close();
    }
  });

  test('fastify: served under its prefix, the folder redirect keeps it, routes outside it untouched', async () => {
    const app = Fastify();
    app.get('/app.js', async () => 'the route, not the file');
    await app.register(precompressor, { root: dir, prefix: '/static', watch: false });
    // a real server, not app.inject(): light-my-request needs require(esm), which Jest has on Node 24.9+ only
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = app.server.address().port;
    try {
      const file = await request(port, '/static/app.js', { headers: { 'accept-encoding': 'gzip' } });
      expect([file.status, file.headers['content-encoding']]).toEqual([200, 'gzip']);
      expect(decode(file).toString()).toBe(JS);
      expect((await request(port, '/app.js')).body.toString()).toBe('the route, not the file');
      const folder = await request(port, '/static/docs?x=1');
      expect([folder.status, folder.headers.location]).toEqual([301, '/static/docs/?x=1']);
      expect((await request(port, '/static/precompressor-manifest.json')).status).toBe(404);
    } finally {
      await app.close();
    }
  });

  (fssync.existsSync('/proc/self/fd') ? test : test.skip)('fetch and fastify: a client gone mid-body leaves no descriptor open', async () => {
    await fs.writeFile(path.join(dir, 'big.bin'), crypto.randomBytes(4 * 1024 * 1024)); // unlisted: streamed from disk
    const open = () => fssync.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fssync.readlinkSync(`/proc/self/fd/${fd}`) === path.join(dir, 'big.bin');
      } catch {
        return false;
      }
    }).length;
    const files = fetchHandler(dir, { unlisted: true, watch: false });
    const hono = new Hono();
    hono.use(async (c, next) => (await files(c.req.raw)) ?? next());
    const { server, port } = await new Promise((resolve) => {
      const srv = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ server: srv, port: info.port }));
    });
    const app = Fastify();
    await app.register(precompressor, { root: dir, unlisted: true, watch: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      for (const p of [port, app.server.address().port]) {
        await new Promise((resolve, reject) => {
          const req = http.get({ host: '127.0.0.1', port: p, path: '/big.bin' }, (res) => {
            res.once('data', () => {
              expect(open()).toBe(1); // streaming through the checked descriptor
              req.destroy();
              resolve(undefined);
            });
          });
          req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
        });
        // until the server has seen the connection go (bounded): then nothing of it stays open
        for (const deadline = Date.now() + WAIT_MS; open() > 0 && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(open()).toBe(0);
      }
    } finally {
      files.close();
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
      await app.close();
    }
  });
});
