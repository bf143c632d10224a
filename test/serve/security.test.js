import fs from 'node:fs/promises';
import path from 'node:path';
import express from 'express';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { makeSite, listen, request } from '../helpers/serve-site.js';

/**
 * Attack list, sent as raw request targets (no URL normalisation), against a root that sits next
 * to a sibling folder sharing its name prefix, with a secret outside, a dotfile inside, symlinks
 * out of root (file, folder and a `.br` sidecar), and the manifest itself. Each group names the
 * advisories it covers.
 */

const SECRET = 'TOP-SECRET-CONTENT';
let base, site, mw, srv, unlisted, usrv, app, asrv;

beforeAll(async () => {
  site = await makeSite({ 'index.html': '<p>home</p>'.repeat(20), 'app.js': 'let a = 1;\n'.repeat(200), 'docs/page.html': '<p>p</p>'.repeat(20), '.env': SECRET });
  base = path.dirname(site.dir);
  const name = path.basename(site.dir);
  // sibling sharing the prefix (CVE-2014-6394, sirv 3.0.2) and a secret outside root
  await fs.mkdir(path.join(base, `${name}-private`), { recursive: true });
  await fs.writeFile(path.join(base, `${name}-private`, 'secret.txt'), SECRET);
  await fs.writeFile(path.join(base, `${name}-secret.txt`), SECRET);
  // symlinks out of root: a file, a folder, and a .br sidecar of a listed file (mini-static)
  await fs.symlink(path.join(base, `${name}-secret.txt`), path.join(site.dir, 'link.txt'));
  await fs.symlink(path.join(base, `${name}-private`), path.join(site.dir, 'linkdir'));
  await fs.writeFile(path.join(site.dir, 'side.js'), 'let side = 1;\n'.repeat(100));
  await fs.writeFile(path.join(base, `${name}-evil.br`), SECRET);
  await fs.symlink(path.join(base, `${name}-evil.br`), path.join(site.dir, 'side.js.br'));
  // list the links in the manifest as if a careless build had followed them
  const m = JSON.parse(await fs.readFile(site.manifestPath, 'utf8'));
  const entry = (size) => ({ size, mtimeMs: 0, hash: 'sha256-x', variants: {} });
  m.files['link.txt'] = entry(SECRET.length);
  m.files['linkdir/secret.txt'] = entry(SECRET.length);
  const side = await fs.stat(path.join(site.dir, 'side.js'));
  m.files['side.js'] = { size: side.size, mtimeMs: side.mtimeMs, hash: 'sha256-y', variants: { br: { size: SECRET.length } } };
  await fs.writeFile(site.manifestPath, JSON.stringify(m));

  mw = serveStatic(site.dir, { watch: false });
  srv = await listen(mw);
  unlisted = serveStatic(site.dir, { watch: false, unlisted: true });
  usrv = await listen(unlisted);
  app = express();
  app.use('/static', serveStatic(site.dir, { watch: false, fallthrough: false }));
  asrv = await listen(app);
});

afterAll(async () => {
  mw.close();
  unlisted.close();
  await Promise.all([srv.close(), usrv.close(), asrv.close()]);
  const name = path.basename(site.dir);
  for (const p of [site.dir, `${name}-private`, `${name}-secret.txt`, `${name}-evil.br`]) {
    await fs.rm(path.resolve(base, p), { recursive: true, force: true });
  }
});

const ATTACKS = [
  // traversal, raw and encoded (send CVE-2014-6394, sirv 0.4.6 / 3.0.2, serve GHSA-v588)
  '/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/%2e%2e/etc/passwd', '/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', '/.%2e/.%2e/etc/passwd',
  '/docs/../../etc/passwd', '/docs/%2e%2e/%2e%2e/etc/passwd', '/..%5c..%5cetc%5cpasswd', '/..\\..\\etc\\passwd',
  '/%252e%252e/%252e%252e/etc/passwd', // double-encoded: decoded once, stays literal
  // a folder link into the sibling that shares the root's name prefix: its realpath
  // <root>-private/secret.txt passes a containment check that ignores the separator (sirv 3.0.2)
  '/linkdir/secret.txt', '/..%2f..%2ftmp',
  // overlong UTF-8 and invalid encodings (ecstatic %00 DoS, CVE-2015-9242 family)
  '/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd', '/%c0%af', '/%e0%80%ae%e0%80%ae/', '/%', '/%zz', '/%ED%A0%80',
  // NUL bytes
  '/index.html%00.js', '/app.js%00', '/%00',
  // encoded separators (@fastify/static CVE-2026-6414)
  '/docs%2Fpage.html', '/docs%2fpage.html', '/docs%5Cpage.html',
  // non-canonical (@fastify/static CVE-2026-7120)
  '//index.html', '/./index.html', '/docs/./page.html', '/docs//page.html',
  // dotfiles, raw and encoded, and the manifest
  '/.env', '/%2eenv', '/docs/../.env', '/precompressor-manifest.json',
  // symlinks out of root
  '/link.txt',
  // case folding must not reach a different file
  '/INDEX.HTML', '/App.js',
  // absolute-form target
  'http://evil.example/../secret.txt',
];

describe.each([
  ['node:http', () => srv.port, ''],
  ['unlisted (stat-based lookups)', () => usrv.port, ''],
  ['Express mount, fallthrough false', () => asrv.port, '/static'],
])('attack list via %s', (_n, port, prefix) => {
  test.each(ATTACKS)('%s never leaks', async (target) => {
    const t = target.startsWith('/') ? prefix + target : target;
    const res = await request(port(), t, { headers: { 'accept-encoding': 'br, gzip' } });
    expect(res.body.toString()).not.toContain(SECRET);
    expect(res.status).not.toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.location).toBeUndefined();
  });
});

test('a .br sidecar that is a symlink out of root is never sent; the original is', async () => {
  const res = await request(srv.port, '/side.js', { headers: { 'accept-encoding': 'br' } });
  expect(res.status).toBe(200);
  expect(res.headers['content-encoding']).toBeUndefined();
  expect(res.body.toString()).not.toContain(SECRET);
});

test('status codes: 400 malformed, 403 traversal, 404 dotfile and miss (node:http)', async () => {
  expect((await request(srv.port, '/%zz')).status).toBe(400);
  expect((await request(srv.port, '/a%00b')).status).toBe(400);
  expect((await request(srv.port, '/a%2Fb')).status).toBe(400);
  expect((await request(srv.port, '/../x')).status).toBe(403);
  expect((await request(srv.port, '/.env')).status).toBe(404);
  expect((await request(srv.port, '/nope')).status).toBe(404);
});

test('open redirect: folder redirects stay on the same origin', async () => {
  for (const t of ['//evil.example/docs', '/\\evil.example/docs', 'http://evil.example/docs']) {
    const res = await request(srv.port, t);
    // Either refused, or redirected within this origin: never a Location to another host.
    expect([301, 400, 404]).toContain(res.status);
    expect(res.headers.location ?? '/').toMatch(/^\/(?![/\\])/);
  }
  const ok = await request(srv.port, '/docs');
  expect(ok.status).toBe(301);
  expect(ok.headers.location).toBe('/docs/');
  expect(ok.body.toString()).not.toContain('<a'); // no markup in the body (CVE-2024-43799/43800)
  const mounted = await request(asrv.port, '/static/docs');
  expect(mounted.headers.location).toBe('/static/docs/');
});
