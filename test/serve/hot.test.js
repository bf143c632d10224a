import fs from 'node:fs/promises';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import express4 from 'express4';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { HotReps, HOT_LIMIT } from '../../lib/serve/site/hot-reps.js';
import { makeSite, listen } from '../helpers/serve-site.js';
import { changed } from '../helpers/changed.js';
import { tempDir, writeTree } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';

// A repeated request is answered from what was remembered (lib/serve/core/hot.js): every answer must be,
// byte for byte, what the whole decision gives (the first request of a fresh server).

const JS = 'export const answer = 42;\n'.repeat(400);
const CSS = 'body { color: red; }\n'.repeat(300);
const FILES = {
  'app.js': JS, 'style.css': CSS, 'index.html': '<!doctype html><title>x</title>'.repeat(20),
  'docs/index.html': '<p>docs</p>'.repeat(30), 'img.png': Buffer.from([137, 80, 78, 71, 1, 2, 3, 4, 5]), '.env': 'SECRET=1\n',
};
const cleanup = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/**
 * The raw bytes of the response to one request on a connection of its own, its Date line removed.
 * @param {number} port
 * @param {string} method
 * @param {string} url
 * @param {Record<string, string>} headers
 */
function raw(port, method, url, headers = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1').replace(/\r\nDate: [^\r]*/, '')));
    sock.on('error', reject);
    const lines = [`${method} ${url} HTTP/1.1`, 'Host: x', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    sock.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** A server around serveStatic(dir, options) (or `handler(mw)`), closed after the file's tests. */
async function serve(dir, options = {}, handler = (mw) => mw) {
  const mw = serveStatic(dir, { watch: false, ...options });
  const srv = await listen(handler(mw));
  cleanup.push(async () => {
    mw.close();
    await srv.close();
  });
  return { mw, port: srv.port, close: async () => { mw.close(); await srv.close(); } };
}

/** What the whole decision answers: the first request of a server of its own. */
async function reference(dir, method, url, headers, options = {}, handler = undefined) {
  const s = await serve(dir, options, handler);
  try {
    return await raw(s.port, method, url, headers);
  } finally {
    await s.close();
  }
}

let site;
beforeAll(async () => {
  site = await makeSite(FILES);
  cleanup.push(() => fs.rm(site.dir, { recursive: true, force: true }));
});

const URLS = ['/app.js', '/style.css', '/', '/docs/', '/img.png', '/app.js?v=1', '/.env', '/precompressor-manifest.json', '/nope.js'];
const AES = [undefined, 'br', 'gzip', 'br, gzip', 'identity', 'gzip;q=0.5, br;q=0.9', 'br;q=0, gzip;q=0, identity;q=0'];

test('GET and HEAD, asked again and again, answer as the first request of a fresh server', async () => {
  const s = await serve(site.dir);
  for (const url of URLS) {
    for (const ae of AES) {
      const headers = ae === undefined ? {} : { 'Accept-Encoding': ae };
      for (const method of ['GET', 'HEAD']) {
        const want = await reference(site.dir, method, url, headers);
        for (let i = 0; i < 3; i++) expect([url, ae, method, i, await raw(s.port, method, url, headers)]).toEqual([url, ae, method, i, want]);
      }
    }
  }
  // one remembered answer per target that is a file (the misses, the manifest and the dotfile are not)
  expect(s.mw.memory().hot).toBe(6);
});

test.each([
  ['If-None-Match', (etag) => ({ 'If-None-Match': etag })],
  ['If-None-Match of another', () => ({ 'If-None-Match': '"other"' })],
  ['If-Modified-Since', () => ({ 'If-Modified-Since': new Date(Date.now() + 86400e3).toUTCString() })],
  ['If-Match of another', () => ({ 'If-Match': '"other"' })],
  ['If-Unmodified-Since in the past', () => ({ 'If-Unmodified-Since': new Date(0).toUTCString() })],
  ['Range', () => ({ Range: 'bytes=3-20' })],
  ['Range beyond the end', () => ({ Range: 'bytes=900000-' })],
  ['Range with If-Range of another', () => ({ Range: 'bytes=3-20', 'If-Range': '"other"' })],
])('%s after the plain request was remembered: answered as by the whole decision', async (_name, extra) => {
  const s = await serve(site.dir);
  const br = { 'Accept-Encoding': 'br' };
  for (let i = 0; i < 3; i++) await raw(s.port, 'GET', '/app.js', br);
  expect(s.mw.memory().hot).toBe(1);
  const etag = /\r\nETag: ([^\r]*)/.exec(await raw(s.port, 'GET', '/app.js', br))[1];
  for (const method of ['GET', 'HEAD']) {
    const headers = { ...br, ...extra(etag) };
    const want = await reference(site.dir, method, '/app.js', headers);
    expect(await raw(s.port, method, '/app.js', headers)).toBe(want);
  }
});

test('the setHeaders hook runs on every request; headers and a status set before are kept', async () => {
  let calls = 0;
  const hooked = await serve(site.dir, { setHeaders: (res) => res.setHeader('X-Call', String(++calls)) });
  for (let i = 1; i <= 3; i++) expect(await raw(hooked.port, 'GET', '/app.js')).toContain(`\r\nX-Call: ${i}\r\n`);
  expect(hooked.mw.memory().hot).toBe(0);

  const before = (mw) => (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    mw(req, res);
  };
  const cached = await serve(site.dir, {}, before);
  const want = await reference(site.dir, 'GET', '/app.js', {}, {}, before);
  expect(want).toContain('\r\nCache-Control: no-store\r\n');
  for (let i = 0; i < 3; i++) expect(await raw(cached.port, 'GET', '/app.js')).toBe(want);

  const notFound = (mw) => (req, res) => {
    res.statusCode = 404;
    mw(req, res);
  };
  const page = await serve(site.dir, {}, notFound);
  for (let i = 0; i < 3; i++) expect(await raw(page.port, 'GET', '/index.html')).toMatch(/^HTTP\/1\.1 404 /);
});

test('a reload: the new manifest\'s files are sent, not the remembered ones', async () => {
  const dir = (await makeSite({ 'app.js': JS, 'b.js': JS })).dir;
  cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
  const s = await serve(dir);
  for (const ae of ['br', 'identity']) for (let i = 0; i < 3; i++) await raw(s.port, 'GET', '/app.js', { 'Accept-Encoding': ae });
  expect(s.mw.memory().hot).toBe(1);
  await makeSite({ 'app.js': `${JS}// v2\n`, 'b.js': JS }, { dir });
  await s.mw.reload();
  for (const ae of ['br', 'identity']) {
    const want = await reference(dir, 'GET', '/app.js', { 'Accept-Encoding': ae });
    if (ae === 'identity') expect(want.endsWith('// v2\n')).toBe(true);
    for (let i = 0; i < 3; i++) expect(await raw(s.port, 'GET', '/app.js', { 'Accept-Encoding': ae })).toBe(want);
  }
});

test('a file changed on disk (its event seen) is sent as it is now', async () => {
  const dir = (await makeSite({ 'app.js': JS })).dir;
  cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
  const s = await serve(dir, { watch: true });
  await s.mw.settled();
  for (let i = 0; i < 3; i++) expect(await raw(s.port, 'GET', '/app.js')).toContain('export const answer');
  expect(s.mw.memory().hot).toBe(1);
  const seen = changed(dir, 'app.js');
  await fs.writeFile(path.join(dir, 'app.js'), 'export const answer = 43;\n');
  await seen;
  for (let i = 0; i < 3; i++) expect(await raw(s.port, 'GET', '/app.js')).toMatch(/\r\n\r\nexport const answer = 43;\n$/);
});

test('bodies evicted from memory: every answer is still the whole decision\'s', async () => {
  const { dir, manifest } = await makeSite({ 'a.js': JS, 'b.css': CSS });
  cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
  const gz = { 'Accept-Encoding': 'gzip' };
  const want = { '/a.js': await reference(dir, 'GET', '/a.js', gz), '/b.css': await reference(dir, 'GET', '/b.css', gz) };
  // room for one of the two gzip bodies at a time (the originals, larger, are never held)
  const budget = Math.max(manifest.files['a.js'].variants.gzip.size, manifest.files['b.css'].variants.gzip.size);
  const s = await serve(dir, { memoryBudget: budget, memoryFileLimit: budget });
  for (let i = 0; i < 8; i++) {
    const url = i % 4 < 2 ? '/a.js' : '/b.css';
    expect(await raw(s.port, 'GET', url, gz)).toBe(want[url]);
    expect(s.mw.memory().bodies).toBe(1);
  }
});

test('Express 4 mounted at a path and at the root: repeated answers as the first', async () => {
  const app = (mw) => {
    const a = express4();
    a.use('/static', mw);
    a.use(mw);
    return a;
  };
  const s = await serve(site.dir, {}, app);
  for (const url of ['/static/app.js', '/app.js', '/static', '/static/docs/']) {
    const want = await reference(site.dir, 'GET', url, { 'Accept-Encoding': 'br' }, {}, app);
    for (let i = 0; i < 3; i++) expect(await raw(s.port, 'GET', url, { 'Accept-Encoding': 'br' })).toBe(want);
  }
  expect(await raw(s.port, 'GET', '/app.js')).toContain('\r\nContent-Type: text/javascript; charset=UTF-8\r\n');
});

test('pipelined repeats on one connection: each answered whole, in order', async () => {
  const s = await serve(site.dir);
  const one = await reference(site.dir, 'GET', '/style.css', { 'Accept-Encoding': 'br' });
  const body = one.slice(one.indexOf('\r\n\r\n'));
  const got = await new Promise((resolve, reject) => {
    const sock = net.connect(s.port, '127.0.0.1');
    const chunks = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.on('error', reject);
    const req = (close) => `GET /style.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    sock.write(req(false) + req(false) + req(false) + req(false) + req(true));
  });
  const responses = got.split('HTTP/1.1 ').slice(1);
  expect(responses).toHaveLength(5);
  for (const r of responses) expect(r.startsWith('200 OK') && r.endsWith(body)).toBe(true);
});

test('the memo: an answer per target and Accept-Encoding, while the entries and the body are the same; bounded', () => {
  const entries = { changes: 0 };
  const entry = { used: false };
  const a = { body: Buffer.from('a'), used: false };
  const b = { body: Buffer.from('b'), used: false };
  const hot = new HotReps();
  hot.set(entries, '/x', 'br', entry, a, ['A', '1']);
  hot.set(entries, '/x', undefined, entry, b, ['B', '2']);
  expect([hot.get(entries, '/x', 'br')?.head, hot.get(entries, '/x', undefined)?.rep, hot.get(entries, '/x', 'gzip')])
    .toEqual([['A', '1'], b, null]);
  expect([a.used, b.used, entry.used]).toEqual([true, true, true]);
  expect(hot.get({ changes: 0 }, '/x', 'br')).toBeNull(); // another manifest's entries
  a.body = null; // evicted from the body cache
  expect(hot.get(entries, '/x', 'br')).toBeNull();
  entries.changes++; // an entry forgotten, stale or evicted
  expect(hot.get(entries, '/x', undefined)).toBeNull();
  for (let i = 0; i <= HOT_LIMIT; i++) hot.set(entries, `/${i}`, 'br', entry, b, []);
  expect(hot.size).toBe(1);
  expect(hot.get(entries, `/${HOT_LIMIT}`, 'br')?.rep).toBe(b);
});

const encoders = deltaEncoders();
if (encoders.length === 0) console.warn(`hot.test.js: the site dictionary and deploy delta test is skipped: Node ${process.version} has no zstd or Brotli dictionary encoder`);
(encoders.length > 0 ? test : test.skip)('pages with the site dictionary\'s Link and assets with deploy deltas: repeated answers as the first', async () => {
  const work = await tempDir('pc-hot-dict-');
  cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
  const dir = path.join(work, 'dist');
  const store = path.join(work, 'store');
  const v1 = `export const version = 1;\n${JS}`;
  await writeTree(dir, { 'assets/index-A1xxxxx1.js': v1 });
  await precompress(dir, { dictionaryStore: store, cache: false });
  await fs.rm(path.join(dir, 'assets'), { recursive: true });
  await writeSite(dir, 8);
  await writeTree(dir, { 'assets/index-B2xxxxx2.js': `export const version = 2;\n${JS}` });
  await precompress(dir, { dictionaryStore: store, cache: false });
  const m = JSON.parse(await fs.readFile(path.join(dir, 'precompressor-manifest.json'), 'utf8'));
  const sha = (b) => crypto.createHash('sha256').update(b).digest('base64');
  const pageKey = sha(await fs.readFile(path.join(dir, m.siteDictionary.path)));
  const s = await serve(dir);
  const asks = [
    // the same Accept-Encoding without and then with Available-Dictionary: the second is a delta, not the first's answer
    { 'Accept-Encoding': 'br' }, { 'Accept-Encoding': 'br, dcb, dcz' },
    { 'Accept-Encoding': 'br, dcb, dcz', 'Available-Dictionary': `:${pageKey}:`, 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'navigate' },
    { 'Accept-Encoding': 'br, dcb, dcz', 'Available-Dictionary': `:${sha(v1)}:`, 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors' },
  ];
  const urls = ['/', '/index.html', '/docs/page-3.html', '/assets/index-B2xxxxx2.js', `/${m.siteDictionary.path}`];
  const encodings = new Set();
  for (const url of urls) {
    for (const headers of asks) {
      for (const method of ['GET', 'HEAD']) {
        const want = await reference(dir, method, url, headers);
        encodings.add(/\r\nContent-Encoding: ([^\r]*)/.exec(want)?.[1]);
        for (let i = 0; i < 3; i++) expect([url, headers, method, i, await raw(s.port, method, url, headers)]).toEqual([url, headers, method, i, want]);
      }
    }
  }
  // the deltas were answered (never remembered: they depend on Available-Dictionary), the pages linked
  expect([...encodings].filter((e) => e === 'dcb' || e === 'dcz').length).toBeGreaterThan(0);
  expect(await raw(s.port, 'GET', '/docs/page-3.html', asks[0])).toContain(`\r\nLink: <../${m.siteDictionary.path}>; rel="compression-dictionary"\r\n`);
  expect(s.mw.memory().hot).toBe(urls.length);
  // a Link set before joins the site dictionary's: each response's own, never one remembered
  let n = 0;
  const preload = (mw) => (req, res) => {
    res.setHeader('Link', `</app-${++n}.css>; rel=preload`);
    mw(req, res);
  };
  const linked = await serve(dir, {}, preload);
  for (let i = 1; i <= 3; i++) {
    expect(await raw(linked.port, 'GET', '/docs/page-3.html', asks[0]))
      .toContain(`\r\nLink: </app-${i}.css>; rel=preload, <../${m.siteDictionary.path}>; rel="compression-dictionary"\r\n`);
  }
});

test('an SPA shell is answered afresh: whether a target gets it depends on Accept, which the memo does not key on', async () => {
  const dir = (await makeSite({ 'index.html': '<!doctype html><title>shell</title>'.repeat(40), 'app.js': JS })).dir;
  cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
  const s = await serve(dir, { spa: 'index.html' });
  const html = { Accept: 'text/html', 'Accept-Encoding': 'br' };
  const json = { Accept: 'application/json', 'Accept-Encoding': 'br' };
  const wantHtml = await reference(dir, 'GET', '/app/route', html, { spa: 'index.html' });
  const wantJson = await reference(dir, 'GET', '/app/route', json, { spa: 'index.html' });
  expect([wantHtml.slice(0, 15), wantJson.slice(0, 15)]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 404 No']);
  for (let i = 0; i < 3; i++) {
    expect(await raw(s.port, 'GET', '/app/route', html)).toBe(wantHtml);
    expect(await raw(s.port, 'GET', '/app/route', json)).toBe(wantJson);
  }
  // the shell's own target is remembered like any file's
  for (let i = 0; i < 3; i++) expect(await raw(s.port, 'GET', '/index.html', json)).toBe(await reference(dir, 'GET', '/index.html', json, { spa: 'index.html' }));
  expect(s.mw.memory().hot).toBe(1);
});
