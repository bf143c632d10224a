import fs from 'node:fs/promises';
import zlib from 'node:zlib';
import express5 from 'express';
import express4 from 'express4';
import { precompress, serveStatic } from '../../lib/index.js';
import { listen, request } from './serve-site.js';
import { tempDir, writeTree, textOf, noiseOf } from './tmp.js';

/**
 * Side-by-side harness for the drop-in tests: the same app is built twice on the same framework,
 * once around `express.static(root, options)` and once around
 * `serveStatic(root, { ...options, unlisted: true })`, and the same raw request is sent to both.
 */

export const FRAMEWORKS = /** @type {const} */ ([['Express 5', express5], ['Express 4', express4]]);

/** Files big enough to be compressed, small ones, incompressible ones, and the awkward names. */
export const SITE = {
  'index.html': `<!doctype html><title>home</title>${textOf(6000, 1)}`,
  'app.js': textOf(90_000, 2), // streamed from disk (over memoryFileLimit)
  'style.css': textOf(3000, 3),
  'small.txt': 'tiny\n',
  'photo.png': noiseOf(5000),
  'data.json': JSON.stringify({ text: textOf(2000, 4) }),
  'noext': textOf(1500, 5),
  'unknown.xyz': textOf(1500, 6),
  'docs/index.html': `<p>docs</p>${textOf(2000, 7)}`,
  'docs/guide.html': `<p>guide</p>${textOf(2000, 8)}`,
  'docs/page.v2.html': `<p>v2</p>${textOf(2000, 9)}`,
  'noindex/file.txt': textOf(1200, 10),
  'café/menu.txt': textOf(1200, 11),
  'space name.txt': textOf(1200, 12),
  'amp&quote\'.d/x.txt': 'x\n',
  '.env': 'SECRET=1\n',
  '.well-known/security.txt': 'Contact: mailto:security@example.com\n',
  'sub/.hidden/deep.txt': 'deep\n',
};

/**
 * A mkdtemp copy of SITE (plus an empty folder) compressed by the real `precompress()`.
 * @returns {Promise<{ dir: string, listed: Set<string> }>}
 */
export async function makeDropinSite() {
  const dir = await tempDir('pc-dropin-');
  await writeTree(dir, SITE);
  await fs.mkdir(`${dir}/emptydir`);
  await precompress(dir, { concurrency: 1 });
  const manifest = JSON.parse(await fs.readFile(`${dir}/precompressor-manifest.json`, 'utf8'));
  return { dir, listed: new Set(Object.keys(manifest.files)) };
}

/**
 * Build an app: `before` handlers, the static middleware (at `mount` if given), a fallthrough
 * handler that says so, and an error handler that shows the error it got.
 */
function buildApp(express, mw, { mount, before = [] }) {
  const app = express();
  app.disable('x-powered-by');
  for (const h of before) app.use(h);
  if (mount) app.use(mount, mw);
  else app.use(mw);
  app.use((req, res) => {
    res.setHeader('X-Fell-Through', 'yes');
    res.end(`fell through with ${res.statusCode}`);
  });
  // eslint-disable-next-line no-unused-vars
  app.use((err, req, res, next) => {
    const shown = {
      name: err.name, message: err.message, status: err.status, statusCode: err.statusCode,
      expose: err.expose, headers: err.headers ?? null, isHttpError: err.constructor?.name,
      // the system error a miss came from (ENOENT, ENAMETOOLONG): under jest, a Node error is of
      // another realm, so http-errors keeps its code but not its message
      code: err.code ?? null,
    };
    res.status(err.status ?? 500).json(shown);
  });
  return app;
}

const servers = new Map();
const closers = [];

/**
 * The pair of servers for one framework and one set of options (started once, then reused).
 * @param {string} dir
 * @param {[string, any]} framework
 * @param {object} [options] express.static options
 * @param {{ mount?: string, before?: Function[], key?: string }} [app]
 */
export async function pair(dir, framework, options, app = {}) {
  const key = `${framework[0]} ${JSON.stringify(options)} ${app.mount ?? ''} ${app.key ?? ''}`;
  if (servers.has(key)) return servers.get(key);
  const express = framework[1];
  // app.js (90 kB) streamed from disk, as the 64 KiB memoryFileLimit of earlier versions did
  const ours = serveStatic(dir, { memoryFileLimit: 64 * 1024, ...options, unlisted: true, watch: false });
  const a = await listen(buildApp(express, express.static(dir, options), app));
  const b = await listen(buildApp(express, ours, app));
  closers.push(async () => {
    ours.close();
    await a.close();
    await b.close();
  });
  const p = { theirs: a.port, ours: b.port };
  servers.set(key, p);
  return p;
}

export async function closeAll() {
  for (const c of closers.splice(0)) await c();
  servers.clear();
}

/** Decoded body of a response, by its Content-Encoding. */
export function bodyOf(res) {
  const enc = res.headers['content-encoding'];
  if (res.body.length === 0) return res.body;
  if (enc === 'br') return zlib.brotliDecompressSync(res.body);
  if (enc === 'gzip') return zlib.gunzipSync(res.body);
  if (enc === 'zstd') return zlib.zstdDecompressSync(res.body);
  return res.body;
}

/** Headers compared exactly (Vary, ETag and Content-Encoding have their own rules below). */
export const SAME_HEADERS = [
  'content-type', 'content-length', 'content-range', 'accept-ranges', 'cache-control', 'last-modified',
  'location', 'allow', 'x-content-type-options', 'content-security-policy', 'x-fell-through', 'x-custom',
];

/** Vary without the Accept-Encoding that serveStatic adds on negotiable paths. */
function varyRest(v) {
  return (v ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '' && t.toLowerCase() !== 'accept-encoding').join(', ');
}

/**
 * What a client sees, with the allowed differences taken out: a variant's Content-Encoding and
 * Content-Length (the body is compared decoded), the Accept-Encoding in Vary, and, for files of
 * the manifest (`listed`), the ETag's value: ours is strong, from the content hash; express.static's
 * is weak, from size and mtime. Its presence is still compared, and files served stat-based must
 * carry the very same ETag.
 */
export function view(res, { listed }) {
  const h = res.headers;
  const body = bodyOf(res);
  const out = { status: res.status, body: body.toString('latin1') };
  for (const name of SAME_HEADERS) out[name] = h[name];
  if (h['content-encoding'] && h['content-encoding'] !== 'identity') {
    out['content-length'] = String(body.length);
    if (h['content-range']) out['content-range'] = '(range of a variant)';
  }
  out.vary = varyRest(h.vary);
  out.etag = h.etag === undefined || !listed ? h.etag : '(present)';
  return out;
}

/**
 * Send the same request to both servers. `headers` may be a function of a first plain GET of
 * the same path on the same server (to send back that server's own validators).
 * @returns {Promise<{ theirs: any, ours: any, raw: { theirs: any, ours: any } }>}
 */
export async function both(servers, reqPath, { method = 'GET', headers = {}, first } = {}) {
  const one = async (port) => {
    let h = headers;
    if (typeof headers === 'function') h = headers(await request(port, first ?? reqPath));
    return request(port, reqPath, { method, headers: h });
  };
  const [t, o] = await Promise.all([one(servers.theirs), one(servers.ours)]);
  // a strong ETag is ours for a file of the manifest: then only the presence of theirs is compared
  const listed = typeof o.headers.etag === 'string' && !o.headers.etag.startsWith('W/');
  const r = { theirs: view(t, { listed }), ours: view(o, { listed }), raw: { theirs: t, ours: o } };
  if (method === 'HEAD' && o.headers['content-encoding']) {
    // no body to decode: the length of a variant is checked by the middleware tests
    r.theirs['content-length'] = r.ours['content-length'] = '(HEAD of a variant)';
  }
  return r;
}
