import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import express from 'express';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';
import { chooseDictionary, segmentsOf, sharedSegments, skeletonDictionary } from '../../lib/compress/dictionaries/choose-dictionary.js';
import { SiteLink, placeOf, linkedHead } from '../../lib/serve/http/site-link.js';
import { buildEntry } from '../../lib/serve/site/table.js';
import { normalizeServeOptions } from '../../lib/serve/http/options.js';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { parseRequestPath } from '../../lib/serve/http/request-path.js';
import { validateManifest, deltaPath } from '../../lib/manifest/manifest.js';
import { listen, request } from '../helpers/serve-site.js';
import { tempDir, writeTree } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';

// The site dictionary (RFC 9842) end to end over a real HTTP server: the build writes it and the
// pages' dcb/dcz against it, serveStatic links it, serves it, and answers with the variants.

const encoders = deltaEncoders();
const it = encoders.length > 0 ? test : test.skip;
if (encoders.length === 0) console.warn(`site-dictionary tests skipped: Node ${process.version} has no zstd or Brotli dictionary encoder`);
const sha = (b) => crypto.createHash('sha256').update(b).digest('base64');
const VARY = 'Accept-Encoding, Available-Dictionary';

let dir;
beforeEach(async () => {
  dir = await tempDir('pc-sitedict-');
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const manifestOf = async () => JSON.parse(await fs.readFile(path.join(dir, 'precompressor-manifest.json'), 'utf8'));

/** serveStatic on a real server on port 0; run `fn(port)` and close. */
async function served(fn, options = {}) {
  const mw = serveStatic(dir, { watch: false, ...options });
  const srv = await listen((req, res) => mw(req, res, () => {
    res.statusCode = 404;
    res.end();
  }));
  try {
    await fn(srv.port);
  } finally {
    mw.close();
    await srv.close();
  }
}

describe('choosing the dictionary (pure)', () => {
  test('segments cut before each tag; shared ones are those of two pages or more', () => {
    expect(segmentsOf(Buffer.from('<p>a</p><b>x'))).toEqual(['<p>a', '</p>', '<b>x']);
    const segs = [['<a>', '<b>', '<c>'], ['<a>', '<b>', '<d>'], ['<a>', '<e>']];
    expect([...sharedSegments(segs)]).toEqual([['<a>', 3], ['<b>', 2]]);
  });

  test('the skeleton keeps the shared segments of the page in order, repeats included, and what others share after', () => {
    const segs = [['<a>', '<x>', '<a>', '<b>'], ['<a>', '<b>', '<c>'], ['<a>', '<c>', '<y>']];
    const df = sharedSegments(segs);
    expect(skeletonDictionary(segs[0], segs, df, 2, 0).toString()).toBe('<a><a><b>');
    expect(skeletonDictionary(segs[0], segs, df, 2, 100).toString()).toBe('<a><a><b><c>');
    expect(skeletonDictionary(segs[0], segs, df, 3, 100).toString()).toBe('<a><a>');
  });

  it('pages that share a layout get a dictionary that beats their Brotli size; unrelated pages get none', async () => {
    const pages = await writeSite(dir, 10);
    const bytes = await Promise.all(pages.map((p) => fs.readFile(path.join(dir, p.rel))));
    const best = bytes.map((b) => zlib.brotliCompressSync(b).length);
    const c = chooseDictionary(bytes, best, encoders.includes('dcz') ? 'dcz' : 'dcb');
    expect(['segments', 'page']).toContain(c.method);
    expect(c.pageBytes).toBeLessThan(c.baseline * 0.7);
    expect(c.tried.length).toBeGreaterThan(1);
    const random = [0, 1, 2].map((i) => crypto.createHash('sha512').update(String(i)).digest().toString('hex').repeat(1).padEnd(4000, String(i)));
    const none = chooseDictionary(random.map((s) => Buffer.from(s)), random.map((s) => zlib.brotliCompressSync(s).length), 'dcz');
    expect(none.method).toBe('none');
    expect(none.bytes).toBeNull();
  });

  test('the Link header names the dictionary relative to the URL the page is answered at', () => {
    const link = (href) => `<${href}>; rel="compression-dictionary"`;
    /** The Link value at `url` (below a mount: `original` is Express's originalUrl). */
    const at = (dict, url, original) => {
      const p = /** @type {{ rel: string, slash: boolean }} */ (parseRequestPath(url));
      if (p.rel === '' && original !== undefined && !original.endsWith('/')) p.slash = false; // as middleware.js does
      return new SiteLink(dict).value(placeOf(p, original));
    };
    expect(at('precompressor-dictionary.0123456789abcdef.dict', '/index.html')).toBe(link('./precompressor-dictionary.0123456789abcdef.dict'));
    expect(at('d.dict', '/a/b/c.html')).toBe(link('../../d.dict'));
    expect(at('d.dict', '/a/b/')).toBe(link('../../d.dict'));
    expect(at('d.dict', '/a/b/c?x=/y/z')).toBe(link('../../d.dict'));
    expect(at('d.dict', 'http://example.com/a/b/c')).toBe(link('../../d.dict'));
    expect(at('sub/d ü.dict', '/a/%C3%BC/c')).toBe(link('../../sub/d%20%C3%BC.dict'));
    const deep = `/${'x/'.repeat(20)}page`;
    expect(at('d.dict', deep)).toBe(link(`${'../'.repeat(20)}d.dict`));
    // Express's app.use('/app', ...) asked for `/app` (its req.url is `/`): the dictionary is below `app/`
    expect(at('d.dict', '/', '/app')).toBe(link('./app/d.dict'));
    expect(at('d.dict', '/', '/app?x')).toBe(link('./app/d.dict'));
    expect(at('d.dict', '/', '/app/')).toBe(link('./d.dict'));
    expect(at('d.dict', '/')).toBe(link('./d.dict'));
  });
  test('the heads of an entry carry no Link: it is added per response, its array built once per representation and depth', () => {
    const opts = normalizeServeOptions('/srv', {});
    const link = new SiteLink('d.dict');
    const ctx = { root: '/srv', opts, maskOf: () => 1, settingsTag: 't', siteLink: link };
    const src = { size: 9, mtimeMs: 1, hash: 'sha256-x', variants: { br: { size: 5 } } };
    const page = buildEntry('a/b.html', src, ctx);
    expect(page.link).toBe(link);
    const reps = [page.identity, page.reps.br];
    expect(reps.every((r) => !r.head.includes('Link') && !r.head304.includes('Link'))).toBe(true);
    expect(buildEntry('a/b.js', src, ctx).link).toBeNull();
    expect(buildEntry('a/b.html', src, { ...ctx, opts: normalizeServeOptions('/srv', { dictionaries: false }) }).link).toBeNull();
    const res = () => new ServerResponse(new IncomingMessage(new Socket()));
    const rep = page.reps.br;
    const own = linkedHead(rep.head, rep, link, { up: 1, into: '' }, res());
    expect(own).toEqual([...rep.head, 'Link', '<../d.dict>; rel="compression-dictionary"']);
    expect(linkedHead(rep.head, rep, link, { up: 1, into: '' }, res())).toBe(own);
    expect(linkedHead(rep.head, rep, link, { up: 0, into: '' }, res()).at(-1)).toBe('<./d.dict>; rel="compression-dictionary"');
    const set = res();
    set.setHeader('Link', '</s.css>; rel=preload');
    const joined = linkedHead(rep.head, rep, link, { up: 1, into: '' }, set);
    expect(joined.at(-1)).toBe('</s.css>; rel=preload, <../d.dict>; rel="compression-dictionary"');
    expect(linkedHead(rep.head, rep, link, { up: 1, into: '' }, res())).toBe(own);
    expect(rep.head.includes('Link')).toBe(false);
  });
});

it('the build writes the dictionary, its variants and every page against it, each decoding to the page', async () => {
  const pages = await writeSite(dir, 8);
  await writeTree(dir, { 'tiny.html': '<p>too small</p>', 'app.js': 'console.log(1);\n'.repeat(200) });
  const report = await precompress(dir, { cache: false });
  expect(report.failures).toEqual([]);
  const m = await manifestOf();
  expect(m.schema).toBe(3);
  expect(() => validateManifest(m)).not.toThrow();
  const rel = m.siteDictionary.path;
  expect(rel).toMatch(/^precompressor-dictionary\.[0-9a-f]{16}\.dict$/);
  const dict = await fs.readFile(path.join(dir, rel));
  expect(m.files[rel].hash).toBe(m.siteDictionary.hash);
  expect(m.files[rel].dictionary).toEqual({ hash: sha(dict), match: '*', dest: 'document', hashed: true });
  expect(zlib.brotliDecompressSync(await fs.readFile(path.join(dir, `${rel}.br`)))).toEqual(dict);
  expect(report.siteDictionary).toMatchObject({ path: rel, size: dict.length, pages: pages.length, unavailable: null });
  for (const p of pages) {
    const file = await fs.readFile(path.join(dir, p.rel));
    const rec = m.files[p.rel].deltas[sha(dict)];
    expect(Object.keys(rec).sort()).toEqual([...encoders].sort());
    for (const enc of encoders) {
      const body = await fs.readFile(path.join(dir, deltaPath(p.rel, sha(dict), enc)));
      expect(body.length).toBe(rec[enc].size);
      expect(decodeDelta(enc, body, dict)).toEqual(file);
      expect(rec[enc].size).toBeLessThan(m.files[p.rel].variants.br.size * 0.9);
    }
  }
  expect(m.files['tiny.html'].deltas).toBeUndefined();
  expect(Object.keys(m.files['app.js'].deltas ?? {})).not.toContain(sha(dict));
  // A second pass with nothing changed writes nothing and keeps the manifest.
  const again = await precompress(dir, { cache: false });
  expect(again.changes).toEqual([]);
  expect(again.siteDictionary).toMatchObject({ path: rel, written: 0, reused: pages.length * encoders.length });
});

it('serveStatic links the dictionary from pages, serves it as a dictionary, and answers pages as dcb/dcz against it (exact headers, bytes)', async () => {
  const pages = await writeSite(dir, 8);
  await precompress(dir, { cache: false, deltas: false });
  const m = await manifestOf();
  const rel = m.siteDictionary.path;
  const dict = await fs.readFile(path.join(dir, rel));
  const key = sha(dict);
  const page = pages[3].rel;
  const file = await fs.readFile(path.join(dir, page));
  await served(async (port) => {
    const home = await request(port, '/', { headers: { 'accept-encoding': 'br' } });
    expect(home.headers.link).toBe(`<./${rel}>; rel="compression-dictionary"`);
    expect(home.headers.vary).toBe(VARY);
    expect(home.headers['content-encoding']).toBe('br');

    const d = await request(port, `/${rel}`, { headers: { 'accept-encoding': 'gzip, br' } });
    expect([d.status, d.headers['content-encoding'], d.headers['use-as-dictionary'], d.headers['cache-control']])
      .toEqual([200, 'br', 'match="*", match-dest=("document")', 'public, max-age=31536000, immutable']);
    expect(d.headers.link).toBeUndefined();
    expect(sha(zlib.brotliDecompressSync(d.body))).toBe(key);

    const rec = m.files[page].deltas[key];
    const both = await request(port, `/${page}`, { headers: { 'accept-encoding': 'gzip, br, zstd, dcb, dcz', 'available-dictionary': `:${key}:`, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' } });
    const smaller = encoders.length === 2 && rec.dcz.size < rec.dcb.size ? 'dcz' : encoders.includes('dcb') ? 'dcb' : 'dcz';
    expect([both.status, both.headers['content-encoding'], both.headers['content-length'], both.headers.vary])
      .toEqual([200, smaller, String(rec[smaller].size), VARY]);
    expect(both.headers.link).toBe(`<../${rel}>; rel="compression-dictionary"`);
    expect(decodeDelta(smaller, both.body, dict)).toEqual(file);
    for (const enc of encoders) {
      const one = await request(port, `/${page}`, { headers: { 'accept-encoding': `br, ${enc}`, 'available-dictionary': `:${key}:` } });
      expect(one.headers['content-encoding']).toBe(enc);
      expect(decodeDelta(enc, one.body, dict)).toEqual(file);
    }
    // Another dictionary (an old build's), or none: the ordinary Brotli variant, never a broken page.
    const other = await request(port, `/${page}`, { headers: { 'accept-encoding': 'br, dcb, dcz', 'available-dictionary': `:${sha('old')}:` } });
    expect([other.headers['content-encoding'], other.headers.vary]).toEqual(['br', VARY]);
    expect(zlib.brotliDecompressSync(other.body)).toEqual(file);
    // A cross-site no-cors request gets no variant against a dictionary (RFC 9842's check, as for deltas).
    const cross = await request(port, `/${page}`, { headers: { 'accept-encoding': 'br, dcb, dcz', 'available-dictionary': `:${key}:`, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' } });
    expect(cross.headers['content-encoding']).toBe('br');
  });
});

it('the Link resolves to the dictionary from any URL a page is answered at: SPA deep URLs, folder pages, under a mount', async () => {
  await writeSite(dir, 8);
  await precompress(dir, { cache: false, deltas: false });
  const rel = (await manifestOf()).siteDictionary.path;
  const key = sha(await fs.readFile(path.join(dir, rel)));
  const html = { accept: 'text/html', 'accept-encoding': 'br' };
  /** The Link of the page at `url`, and the dictionary fetched where the browser resolves it. */
  const follow = async (port, url) => {
    const page = await request(port, url, { headers: html });
    expect(page.status).toBe(200);
    const href = /^<([^>]*)>; rel="compression-dictionary"$/.exec(page.headers.link)?.[1];
    const target = new URL(href, `http://127.0.0.1${url}`).pathname;
    const d = await request(port, target, { headers: { 'accept-encoding': 'br' } });
    expect([target, d.status, d.headers['use-as-dictionary'] !== undefined]).toEqual([target, 200, true]);
    expect(sha(zlib.brotliDecompressSync(d.body))).toBe(key);
    return [page.headers.link, target];
  };
  const link = (href) => `<${href}>; rel="compression-dictionary"`;
  await served(async (port) => {
    expect(await follow(port, '/users/42/profile')).toEqual([link(`../../${rel}`), `/${rel}`]);
    expect(await follow(port, '/users')).toEqual([link(`./${rel}`), `/${rel}`]);
    expect(await follow(port, '/docs/page-3.html')).toEqual([link(`../${rel}`), `/${rel}`]);
  }, { spa: true });
  // Under Express's app.use('/app', ...): the same Links, resolved below the mount.
  const app = express();
  const mw = serveStatic(dir, { watch: false, spa: true });
  app.use('/app', mw);
  const srv = await listen(app);
  try {
    expect(await follow(srv.port, '/app/users/42/profile?tab=1')).toEqual([link(`../../${rel}`), `/app/${rel}`]);
    expect(await follow(srv.port, '/app/docs/page-3.html')).toEqual([link(`../${rel}`), `/app/${rel}`]);
    expect(await follow(srv.port, '/app/')).toEqual([link(`./${rel}`), `/app/${rel}`]);
  } finally {
    mw.close();
    await srv.close();
  }
});

it('dictionaries: false sends no Link, no Use-As-Dictionary and no variant against the dictionary', async () => {
  const pages = await writeSite(dir, 6);
  await precompress(dir, { cache: false, deltas: false });
  const m = await manifestOf();
  const rel = m.siteDictionary.path;
  const key = m.files[rel].dictionary.hash;
  await served(async (port) => {
    const res = await request(port, `/${pages[1].rel}`, { headers: { 'accept-encoding': 'br, dcb, dcz', 'available-dictionary': `:${key}:` } });
    expect([res.headers['content-encoding'], res.headers.vary, res.headers.link]).toEqual(['br', 'Accept-Encoding', undefined]);
    const d = await request(port, `/${rel}`, { headers: { 'accept-encoding': 'br' } });
    // its name is content-addressed: immutable like any hashed name, dictionaries or not
    expect([d.status, d.headers['use-as-dictionary'], d.headers['cache-control']]).toEqual([200, undefined, 'public, max-age=31536000, immutable']);
  }, { dictionaries: false });
});

it('a new page keeps the previous dictionary (visitors hold it), also after the folder was emptied; pages encoded against it', async () => {
  const store = path.join(dir, '..', `${path.basename(dir)}-store`);
  try {
    const pages = await writeSite(dir, 8);
    await precompress(dir, { cache: false, deltas: false, dictionaryStore: store });
    const rel = (await manifestOf()).siteDictionary.path;
    const dict = await fs.readFile(path.join(dir, rel));
    const next = await writeSite(dir, 9);
    const report = await precompress(dir, { cache: false, deltas: false, dictionaryStore: store });
    expect(report.siteDictionary).toMatchObject({ path: rel, method: 'previous', pages: 9 });
    expect(report.changes.some((c) => c.path === rel)).toBe(false);
    // Vite empties the output folder on every build: the dictionary comes back from the store.
    await fs.rm(dir, { recursive: true });
    await writeSite(dir, 9);
    const again = await precompress(dir, { cache: false, deltas: false, dictionaryStore: store });
    expect(again.siteDictionary).toMatchObject({ path: rel, method: 'previous' });
    expect(await fs.readFile(path.join(dir, rel))).toEqual(dict);
    const m = await manifestOf();
    for (const p of [next[8], pages[1]]) {
      for (const enc of encoders) {
        const body = await fs.readFile(path.join(dir, deltaPath(p.rel, sha(dict), enc)));
        expect(decodeDelta(enc, body, dict)).toEqual(await fs.readFile(path.join(dir, p.rel)));
        expect(body.length).toBe(m.files[p.rel].deltas[sha(dict)][enc].size);
      }
    }
  } finally {
    await fs.rm(store, { recursive: true, force: true });
  }
});

it('a redesign replaces the dictionary: the old one and its variants are removed, a visitor holding it gets br', async () => {
  const pages = await writeSite(dir, 8);
  await precompress(dir, { cache: false, deltas: false });
  const before = await manifestOf();
  const oldRel = before.siteDictionary.path;
  const oldKey = before.files[oldRel].dictionary.hash;
  await writeSite(dir, 8, { redesign: true });
  const report = await precompress(dir, { cache: false, deltas: false });
  expect(report.failures).toEqual([]);
  expect(report.siteDictionary.method).not.toBe('previous');
  const after = await manifestOf();
  const rel = after.siteDictionary.path;
  expect(rel).not.toBe(oldRel);
  expect(report.changes).toContainEqual({ path: oldRel, action: 'remove (old site dictionary)' });
  for (const p of [oldRel, `${oldRel}.br`, `${oldRel}.gz`, deltaPath(pages[1].rel, oldKey, encoders[0])]) {
    await expect(fs.stat(path.join(dir, p))).rejects.toThrow(/ENOENT/);
  }
  expect(after.files[oldRel]).toBeUndefined();
  expect(Object.keys(after.files[pages[1].rel].deltas)).toEqual([after.files[rel].dictionary.hash]);
  await served(async (port) => {
    const res = await request(port, `/${pages[1].rel}`, { headers: { 'accept-encoding': 'br, dcb, dcz', 'available-dictionary': `:${oldKey}:` } });
    expect(res.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(res.body)).toEqual(await fs.readFile(path.join(dir, pages[1].rel)));
    expect((await request(port, `/${oldRel}`)).status).toBe(404);
  });
});

it('--no-site-dictionary (siteDictionary: false) makes none and removes the one a previous build made', async () => {
  await writeSite(dir, 6);
  await precompress(dir, { cache: false, deltas: false });
  const oldRel = (await manifestOf()).siteDictionary.path;
  const report = await precompress(dir, { cache: false, deltas: false, siteDictionary: false });
  const m = await manifestOf();
  expect(m.siteDictionary).toBeUndefined();
  expect(report.siteDictionary).toMatchObject({ path: null, method: 'none' });
  expect(Object.values(m.files).some((e) => e.deltas !== undefined)).toBe(false);
  await expect(fs.stat(path.join(dir, oldRel))).rejects.toThrow(/ENOENT/);
  expect((await fs.readdir(path.join(dir, 'docs'))).filter((n) => /\.dc[bz]$/.test(n))).toEqual([]);
  await served(async (port) => {
    const res = await request(port, '/', { headers: { 'accept-encoding': 'br' } });
    expect(res.headers.link).toBeUndefined();
    expect(res.headers.vary).toBe('Accept-Encoding');
  });
});

it('a dictionary that cannot be written is a warning: no dictionary, no variants against it, the pages served as usual', async () => {
  const pages = await writeSite(dir, 6);
  await precompress(dir, { cache: false, deltas: false });
  const rel = (await manifestOf()).siteDictionary.path;
  // A folder where the same dictionary goes: its rename fails.
  await fs.rm(path.join(dir, rel));
  await fs.mkdir(path.join(dir, rel));
  await fs.writeFile(path.join(dir, rel, 'keep.txt'), 'mine');
  const report = await precompress(dir, { cache: false, deltas: false });
  expect(report.failures).toEqual([]);
  expect(report.warnings).toContainEqual({ path: rel, message: expect.stringMatching(/^site dictionary not written \(/) });
  const m = await manifestOf();
  expect(m.siteDictionary).toBeUndefined();
  expect(pages.every((p) => m.files[p.rel].deltas === undefined)).toBe(true);
  expect((await fs.readdir(path.join(dir, 'docs'))).filter((n) => /\.dc[bz]$/.test(n))).toEqual([]);
  expect(await fs.readFile(path.join(dir, rel, 'keep.txt'), 'utf8')).toBe('mine');
});

test('a schema-3 manifest whose siteDictionary is not a listed file with that hash is refused; deltas without a dictionary only from schema 3', () => {
  const h = 'sha256-47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU';
  const files = { 'd.dict': { size: 1, mtimeMs: 1, hash: h, variants: {} } };
  expect(() => validateManifest({ schema: 3, files, siteDictionary: { path: 'd.dict', hash: h } })).not.toThrow();
  expect(() => validateManifest({ schema: 3, files, siteDictionary: { path: 'x.dict', hash: h } })).toThrow(/siteDictionary/);
  expect(() => validateManifest({ schema: 3, files, siteDictionary: { path: 'd.dict', hash: 'sha256-x' } })).toThrow(/siteDictionary/);
  const withDeltas = { 'a.html': { size: 1, mtimeMs: 1, hash: h, variants: {}, deltas: { [sha('d')]: { dcz: { size: 5, hash: h } } } } };
  expect(() => validateManifest({ schema: 3, files: withDeltas })).not.toThrow();
  expect(() => validateManifest({ schema: 2, files: withDeltas })).toThrow(/deltas but no dictionary/);
});

it('the Link is one header per response: joined to a Link set before (setHeaders, an earlier middleware); on HEAD and 206, not on 304', async () => {
  await writeSite(dir, 8);
  await precompress(dir, { cache: false, deltas: false });
  const rel = (await manifestOf()).siteDictionary.path;
  const ours = (href) => `<${href}>; rel="compression-dictionary"`;
  const preload = '</style.css>; rel=preload; as=style';
  const br = { 'accept-encoding': 'br' };
  await served(async (port) => {
    const page = await request(port, '/docs/page-2.html', { headers: br });
    expect([page.status, page.headers.link]).toEqual([200, ours(`../${rel}`)]);
    const head = await request(port, '/docs/page-2.html', { method: 'HEAD', headers: br });
    expect([head.status, head.headers.link, head.body.length]).toEqual([200, ours(`../${rel}`), 0]);
    const part = await request(port, '/docs/page-2.html', { headers: { ...br, range: 'bytes=0-9' } });
    expect([part.status, part.headers.link, part.body.length]).toEqual([206, ours(`../${rel}`), 10]);
    const again = await request(port, '/docs/page-2.html', { headers: { ...br, 'if-none-match': page.headers.etag } });
    expect([again.status, again.headers.link]).toEqual([304, undefined]);
  });
  await served(async (port) => {
    const page = await request(port, '/docs/page-2.html', { headers: br });
    expect([page.status, page.headers.link]).toEqual([200, `${preload}, ${ours(`../${rel}`)}`]);
  }, { setHeaders: (res) => res.setHeader('Link', preload) });
  const app = express();
  const mw = serveStatic(dir, { watch: false, spa: true, redirect: false });
  app.use((req, res, next) => {
    res.setHeader('Link', [preload, '</app.js>; rel=modulepreload']);
    next();
  });
  app.use('/app', mw);
  const srv = await listen(app);
  try {
    const deep = await request(srv.port, '/app/users/42', { headers: { ...br, accept: 'text/html' } });
    expect([deep.status, deep.headers.link])
      .toEqual([200, `${preload}, </app.js>; rel=modulepreload, ${ours(`../${rel}`)}`]);
    // the mount's own URL without its slash (no redirect): the dictionary is below `app/`
    const mount = await request(srv.port, '/app', { headers: { ...br, accept: 'text/html' } });
    expect([mount.status, mount.headers.link]).toEqual([200, `${preload}, </app.js>; rel=modulepreload, ${ours(`./app/${rel}`)}`]);
  } finally {
    mw.close();
    await srv.close();
  }
});
