import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { loadWasmZstd, nodeHasZstd } from '../../lib/compress/encoders/zstd.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { main } from '../../lib/cli/cli.js';
import { compressFolder } from '../../plugins/compress-folder.js';
import { watchCommand } from '../../lib/cli/watch.js';
import { EventEmitter } from 'node:events';
import { decodeDelta } from '../helpers/delta.js';
import { decode, listen, request } from '../helpers/serve-site.js';
import { tempDir, textOf, writeTree } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { missing, startServer } from '../helpers/real-servers.js';

// A stock nginx (Debian's, with the ngx_brotli static module) and a stock Caddy, with only the files
// `precompressor config` writes included, answer a built site as serveStatic does: the same checks
// run against all three. Where a server cannot (no zstd module in nginx, Caddy's 308), the
// expectation says so; docs/servers.md lists each difference.

const encoders = deltaEncoders();
const SERVERS = /** @type {const} */ (['serveStatic', 'nginx', 'caddy']);
const why = Object.fromEntries(SERVERS.map((s) => [s, s === 'serveStatic' ? null : missing(s)]));
for (const s of SERVERS) if (why[s]) console.warn(`${s} tests skipped: ${why[s]}`);
if (encoders.length === 0) console.warn(`delta checks skipped: Node ${process.version} has no zstd or Brotli dictionary encoder`);

const sha = (/** @type {Buffer} */ b) => crypto.createHash('sha256').update(b).digest('base64');
/** The names a Vary value lists, once each (Caddy repeats the one it adds itself). */
const tokens = (/** @type {string | undefined} */ v) => [...new Set((v ?? '').split(',').map((t) => t.trim().toLowerCase()).filter(Boolean))].sort();
/** The body decoded; zstd by the WebAssembly decoder where node:zlib has none (Node 22.12). */
const decodeBody = async (res) => res.headers['content-encoding'] === 'zstd' && !nodeHasZstd
  ? Buffer.from((await loadWasmZstd()).decompress(res.body)) : decode(res);
/** Version `v` of an app bundle: the same 40 kB with a small edit. @param {number} v */
const bundle = (v) => {
  const base = textOf(40_000, 3);
  return `${base.slice(0, 20_000)} version ${v} ${base.slice(20_000)}`;
};

let work;
let dist;
let conf;
let oldBundle;
/** @type {Record<string, any>} */
let manifest;
/** @type {Record<string, { port: number, close: () => Promise<void> }>} */
const running = {};

beforeAll(async () => {
  work = await tempDir('pc-servers-');
  dist = path.join(work, 'dist');
  conf = path.join(work, 'conf');
  const store = path.join(work, 'store');
  for (const v of [1, 2]) {
    await fs.rm(dist, { recursive: true, force: true });
    await writeSite(dist, 8);
    await writeTree(dist, {
      [`assets/index-V${v}abcde1.js`]: bundle(v), 'app.js': bundle(v + 100), 'about/index.html': '<p>about</p>'.repeat(40),
      'guide.html': '<p>guide page</p>'.repeat(40), 'guide/index.html': '<p>guide folder</p>'.repeat(40),
      [`img/logo-${v}f3c9a2b.png`]: Buffer.alloc(600, v),
      'files/data.tar.gz': 'x'.repeat(300), '.env': 'SECRET=1', 'sp ace/a b.txt': 'hello space '.repeat(40),
    });
    const r = await precompress(dist, { dictionaryStore: store, cache: false, encodings: ['br', 'gzip', 'zstd'] });
    expect(r.failures).toEqual([]);
  }
  oldBundle = Buffer.from(bundle(1));
  manifest = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  const quiet = { write: () => true };
  for (const server of ['nginx', 'caddy']) {
    expect(await main(['config', server, dist, '--out', conf], { stdout: /** @type {any} */ (quiet), stderr: process.stderr })).toBe(0);
  }
  const mw = serveStatic(dist, { watch: false, extensions: ['html'], extensionsFirst: true }); // as `precompressor serve`
  const srv = await listen((req, res) => mw(req, res, () => {
    res.statusCode = 404;
    res.end();
  }));
  running.serveStatic = { port: srv.port, close: async () => { mw.close(); await srv.close(); } };
  for (const s of /** @type {const} */ (['nginx', 'caddy'])) if (!why[s]) running[s] = await startServer(s, dist, conf, work);
}, 120_000);

afterAll(async () => {
  for (const r of Object.values(running)) await r.close();
  await fs.rm(work, { recursive: true, force: true });
});

const get = (server, p, headers = {}) => request(running[server].port, p, { headers });
const file = (rel) => fs.readFile(path.join(dist, rel));

describe.each(SERVERS)('%s', (server) => {
  const it = why[server] ? test.skip : test;
  const dit = why[server] || encoders.length === 0 ? test.skip : test;

  it('sends the variant the client accepts, with Vary: Accept-Encoding; zstd where the server can', async () => {
    const raw = await file('app.js');
    for (const [ae, want] of [['br', 'br'], ['gzip', 'gzip'], ['zstd, gzip', server === 'nginx' ? 'gzip' : 'zstd'],
      ['br;q=0, gzip', 'gzip'], ['identity', undefined]]) {
      const res = await get(server, '/app.js', { 'accept-encoding': ae });
      expect([ae, res.status, res.headers['content-encoding']]).toEqual([ae, 200, want]);
      expect((await decodeBody(res)).equals(raw)).toBe(true);
      expect(tokens(res.headers.vary)).toContain('accept-encoding');
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    }
  });

  it('answers a conditional GET with 304 per encoding, Vary and Cache-Control kept', async () => {
    for (const ae of ['br', 'gzip', 'identity']) {
      const first = await get(server, '/app.js', { 'accept-encoding': ae });
      const again = await get(server, '/app.js', { 'accept-encoding': ae, 'if-none-match': first.headers.etag });
      expect([ae, again.status, again.body.length]).toEqual([ae, 304, 0]);
      // Available-Dictionary only where app.js has deltas: none where Node has no dictionary encoder
      expect(tokens(again.headers.vary)).toEqual(['accept-encoding', ...(encoders.length > 0 ? ['available-dictionary'] : [])]);
      expect(again.headers['cache-control']).toBe('public, max-age=0');
    }
    const br = await get(server, '/app.js', { 'accept-encoding': 'br' });
    const other = await get(server, '/app.js', { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag });
    expect(other.status).toBe(200); // another encoding's ETag does not validate this one
  });

  it('serves nothing internal by name; a listed file named like a variant is served', async () => {
    const internal = ['/precompressor-manifest.json', '/app.js.br', '/app.js.gz', '/app.js.zst', '/.env'];
    if (encoders.length > 0) { // the deploy deltas' files: none made where Node has no dictionary encoder
      const hex = Buffer.from(Object.keys(manifest.files['app.js'].deltas)[0], 'base64').toString('hex').slice(0, 16);
      internal.push(`/app.js.${hex}.dcb`, `/app.js.${hex}.dcz`);
    }
    for (const p of internal) {
      expect([p, (await get(server, p)).status]).toEqual([p, 404]);
    }
    const listed = await get(server, '/files/data.tar.gz');
    expect(listed.status).toBe(200);
    expect(listed.body.equals(await file('files/data.tar.gz'))).toBe(true);
    const spaced = await get(server, '/sp%20ace/a%20b.txt', { 'accept-encoding': 'gzip' });
    expect(decode(spaced).equals(await file('sp ace/a b.txt'))).toBe(true);
  });

  it('makes hashed bundles immutable and usable as dictionaries; other files max-age=0', async () => {
    const res = await get(server, '/assets/index-V2abcde1.js', { 'accept-encoding': 'br' });
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['use-as-dictionary']).toBe('match="index-*.js", match-dest=("script")');
    const plain = await get(server, '/app.js');
    expect(plain.headers['cache-control']).toBe('public, max-age=0');
    // a hashed name that is no dictionary: immutable, without Use-As-Dictionary
    const logo = await get(server, '/img/logo-2f3c9a2b.png');
    expect([logo.status, logo.headers['cache-control'], logo.headers['use-as-dictionary']])
      .toEqual([200, 'public, max-age=31536000, immutable', undefined]);
  });

  it('answers /about with its folder (a redirect to /about/, then its index) and /docs/page-1 with page-1.html', async () => {
    // as \`precompressor serve\`: /guide is guide.html before the folder guide/ (extensions first)
    const guide = await get(server, '/guide');
    expect([guide.status, guide.body.toString()]).toEqual([200, '<p>guide page</p>'.repeat(40)]);
    const redirect = await get(server, '/about');
    expect(redirect.status).toBe(server === 'caddy' ? 308 : 301);
    expect(redirect.headers.location).toBe('/about/');
    expect((await get(server, '/about/')).body.equals(await file('about/index.html'))).toBe(true);
    const page = await get(server, '/docs/page-1', { 'accept-encoding': 'gzip' });
    expect(page.status).toBe(200);
    expect(decode(page).equals(await file('docs/page-1.html'))).toBe(true);
    expect((await get(server, '/nope')).status).toBe(404);
  });

  dit('sends a delta against the previous bundle to a client that holds it, decoded byte for byte', async () => {
    const rel = 'assets/index-V2abcde1.js';
    for (const ae of ['gzip, br, zstd, dcb, dcz', 'gzip, dcz', 'gzip, dcb']) {
      const res = await get(server, `/${rel}`, { 'accept-encoding': ae, 'available-dictionary': `:${sha(oldBundle)}:` });
      const enc = res.headers['content-encoding'];
      const offered = ae.split(', ').filter((e) => e.startsWith('dc') && encoders.includes(/** @type {any} */ (e)));
      if (offered.length === 0) {
        // the only delta offered is one this Node cannot make (dcb before 24.15): no delta, a variant
        expect(enc).not.toMatch(/^dc/);
        continue;
      }
      expect(offered).toContain(enc);
      expect(decodeDelta(/** @type {'dcb'} */ (enc), res.body, oldBundle).equals(await file(rel))).toBe(true);
      expect(tokens(res.headers.vary)).toEqual(['accept-encoding', 'available-dictionary']);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    // not to another site's no-cors request, not for q=0, not for a dictionary we have no delta against
    const denied = [
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'accept-encoding': 'gzip, dcb, dcz' },
      { 'accept-encoding': 'gzip, dcb;q=0, dcz;q=0' },
    ];
    for (const h of denied) {
      const res = await get(server, `/${rel}`, { ...h, 'available-dictionary': `:${sha(oldBundle)}:` });
      expect(res.headers['content-encoding']).toBe('gzip');
    }
    const other = await get(server, `/${rel}`, { 'accept-encoding': 'gzip, dcb, dcz', 'available-dictionary': `:${sha(Buffer.from('x'))}:` });
    expect(other.headers['content-encoding']).toBe('gzip');
  });

  dit('links the site dictionary from HTML pages and sends a page against it', async () => {
    const dictPath = manifest.siteDictionary.path;
    const page = await get(server, '/docs/page-2.html', { 'accept-encoding': 'br' });
    const href = /^<([^>]+)>; rel="compression-dictionary"$/.exec(page.headers.link ?? '')?.[1];
    expect(href && new URL(href, `http://h/docs/page-2.html`).pathname).toBe(`/${dictPath}`);
    const dictRes = await get(server, `/${dictPath}`, { 'accept-encoding': 'br' });
    expect(dictRes.headers['use-as-dictionary']).toBe('match="*", match-dest=("document")');
    expect(dictRes.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const dict = decode(dictRes);
    expect(dict.equals(await file(dictPath))).toBe(true);
    for (const p of ['/docs/page-2.html', '/']) {
      const res = await get(server, p, { 'accept-encoding': 'gzip, br, dcb, dcz', 'available-dictionary': `:${sha(dict)}:` });
      const enc = /** @type {'dcb'} */ (res.headers['content-encoding']);
      expect(['dcb', 'dcz']).toContain(enc);
      const want = await file(p === '/' ? 'index.html' : p.slice(1));
      expect(decodeDelta(enc, res.body, dict).equals(want)).toBe(true);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(tokens(res.headers.vary)).toEqual(['accept-encoding', 'available-dictionary']);
      expect(res.headers.link).toBeDefined();
    }
  });
});

describe('regenerated on each build', () => {
  const io = () => {
    const out = { text: '', write: (/** @type {string} */ s) => ((out.text += s), true) };
    return out;
  };

  test('--server-config writes both servers\' files after the pass; a folder inside the served one is refused first', async () => {
    const site = path.join(work, 'cli-site');
    await writeTree(site, { 'index.html': textOf(3000) });
    const inside = io();
    expect(await main([site, '--server-config', path.join(site, 'conf'), '--quiet'], { stdout: /** @type {any} */ (io()), stderr: /** @type {any} */ (inside) })).toBe(2);
    expect(inside.text).toMatch(/--server-config to be a folder outside the served folder/);
    await expect(fs.access(path.join(site, 'precompressor-manifest.json'))).rejects.toThrow();
    const out = path.join(work, 'cli-conf');
    expect(await main([site, '--server-config', out, '--quiet'], { stdout: /** @type {any} */ (io()), stderr: /** @type {any} */ (io()) })).toBe(0);
    expect((await fs.readdir(out)).sort()).toEqual(['http.conf', 'precompressor.caddy', 'server.conf']);
    const missingOut = io();
    expect(await main(['config', 'nginx', path.join(work, 'none'), '--out', out], { stdout: /** @type {any} */ (io()), stderr: /** @type {any} */ (missingOut) })).toBe(2);
    expect(missingOut.text).toMatch(/does not exist: run precompressor/);
  });

  test('the plugins\' serverConfig writes them after the pass, and says where', async () => {
    const site = path.join(work, 'plugin-site');
    await writeTree(site, { 'index.html': textOf(3000) });
    const out = path.join(work, 'plugin-conf');
    const said = [];
    const logger = { info: (/** @type {string} */ m) => said.push(m), warn: (/** @type {string} */ m) => said.push(m) };
    await compressFolder(site, { serverConfig: out, cache: false, dictionaryStore: path.join(work, 'plugin-store') }, { root: work, logger });
    expect((await fs.readdir(out)).sort()).toEqual(['http.conf', 'precompressor.caddy', 'server.conf']);
    expect(said.at(-1)).toBe(`precompressor: nginx and Caddy configurations written to ${out}`);
  });

  test('--watch rewrites them after each batch that changed something', async () => {
    const root = path.join(work, 'watch-site');
    await writeTree(root, { 'index.html': textOf(3000) });
    const out = path.join(work, 'watch-conf');
    const options = { serverConfig: out, cache: false, dictionaryStore: path.join(work, 'watch-store') };
    let text = '';
    /** @type {(() => void)[]} */
    const waiters = [];
    const stdout = { write: (/** @type {string} */ s) => ((text += s), waiters.splice(0).forEach((w) => w()), true) };
    const seen = (/** @type {RegExp} */ re) => new Promise((resolve) => {
      const check = () => (re.test(text) ? resolve(undefined) : waiters.push(check));
      check();
    });
    const signals = new EventEmitter();
    const code = watchCommand(root, options, { stdout, stderr: io(), signals });
    await seen(/watching /);
    await writeTree(root, { 'assets/app-1a2b3c4d.js': bundle(7) });
    await seen(/compressed assets\/app-1a2b3c4d\.js\n[\s\S]*server configuration written to /);
    expect(await fs.readFile(path.join(out, 'http.conf'), 'utf8')).toContain('"/assets/app-1a2b3c4d.js" "match=');
    signals.emit('SIGINT');
    expect(await code).toBe(0);
  }, 60_000);
});
