import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';
import { acceptedDeltas, parseAvailableDictionary, fetchAllowsDelta, useAsDictionary, chooseDelta } from '../../lib/serve/site/dictionary.js';
import { listen, request } from '../helpers/serve-site.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { changed } from '../helpers/changed.js';

const sha = (s) => crypto.createHash('sha256').update(s).digest('base64');


describe('Available-Dictionary: an RFC 8941 byte sequence of 32 bytes', () => {
  const h = sha('x');
  test.each([
    [`:${h}:`, h],
    [` :${h}:\t`, h],
    [`:${h}:;id="a"`, h],
  ])('%j → the hash', (value, expected) => {
    expect(parseAvailableDictionary(value)).toBe(expected);
  });
  test.each([
    [undefined], [''], ['*'], [h], [`:${h}`], [`"${h}"`], [`:${h}:, :${h}:`], [`:${h.slice(0, -2)}=:`],
    [`:${Buffer.alloc(31).toString('base64')}:`], [`:${h.replace(/=$/, '')}:`], [`:${h.slice(0, -2)}B=:`], [[`:${h}:`]],
  ])('%j → null', (value) => {
    expect(parseAvailableDictionary(/** @type {any} */ (value))).toBeNull();
  });
});

describe('Accept-Encoding for deltas: dcb and dcz named with q > 0, never through *', () => {
  test.each([
    ['gzip, deflate, br, zstd, dcb, dcz', 3],
    ['dcz', 2],
    ['DCB;q=0.5', 1],
    ['dcb;q=0, dcz;q=0.001', 2],
    ['dcz;q=0.000', 0],
    ['dcz;q=1.5', 0],
    ['dcz;q=abc', 0],
    ['*', 0],
    ['br, *;q=1', 0],
    [undefined, 0],
    [['gzip', 'dcz'], 2],
  ])('%j → mask %d (1 dcb, 2 dcz)', (header, mask) => {
    expect(acceptedDeltas(/** @type {any} */ (header))).toBe(mask);
  });
});

test.each([
  [{}, true],
  [{ 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors' }, true],
  [{ 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' }, true],
  [{ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' }, true],
  [{ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }, false],
  [{ 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors' }, false],
  [{ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }, false],
  [{ 'sec-fetch-site': 'cross-site' }, false],
])('Sec-Fetch check %j → %s', (headers, ok) => {
  expect(fetchAllowsDelta(headers)).toBe(ok);
});

test('Use-As-Dictionary: the match is an sf-string (backslashes of URLPattern escapes doubled), match-dest an inner list', () => {
  expect(useAsDictionary({ hash: sha('x'), match: 'index-*.js', dest: 'script', hashed: true })).toBe('match="index-*.js", match-dest=("script")');
  expect(useAsDictionary({ hash: sha('x'), match: 'a\\(1\\)-*.wasm', dest: null, hashed: true })).toBe('match="a\\\\(1\\\\)-*.wasm"');
});

test('chooseDelta: the delta of the offered dictionary, the smaller of the accepted encodings', () => {
  const h = sha('old');
  const deltas = new Map([[h, { dcb: { size: 10, encoding: 'dcb' }, dcz: { size: 12, encoding: 'dcz' } }]]);
  const ask = (extra) => chooseDelta({ 'available-dictionary': `:${h}:`, 'accept-encoding': 'br, dcb, dcz', ...extra }, deltas);
  expect(ask({})?.encoding).toBe('dcb');
  expect(ask({ 'accept-encoding': 'br, dcz' })?.encoding).toBe('dcz');
  expect(ask({ 'accept-encoding': 'br, *' })).toBeNull();
  expect(ask({ 'available-dictionary': `:${sha('other')}:` })).toBeNull();
  expect(ask({ 'available-dictionary': h })).toBeNull();
  expect(ask({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' })).toBeNull();
});

// ---- over HTTP, with real deltas ----

const encoders = deltaEncoders();
const withDeltas = encoders.length > 0 ? describe : describe.skip;

withDeltas('serveStatic with deploy deltas (real server, real deltas)', () => {
  const v1 = `${textOf(30_000, 5)} v1`;
  const v2 = `${textOf(15_000, 5)} changed ${textOf(30_000, 5).slice(15_000)} v2`;
  const REL = 'assets/index-B2xxxxx1.js';
  const h1 = sha(v1);
  const ACCEPT = 'gzip, deflate, br, zstd, dcb, dcz';
  let work;
  let dir;
  let server;
  let mw;
  /** The smaller of the deltas made (the one sent to a browser that accepts both). */
  let best = 'dcz';

  beforeAll(async () => {
    work = await tempDir();
    dir = path.join(work, 'dist');
    const store = path.join(work, 'store');
    await writeTree(dir, { 'assets/index-A1xxxxx1.js': v1 });
    await precompress(dir, { dictionaryStore: store });
    await fs.rm(path.join(dir, 'assets'), { recursive: true });
    await writeTree(dir, { [REL]: v2 });
    const r = await precompress(dir, { dictionaryStore: store });
    expect(r.deltas.files).toBe(1);
    const m = JSON.parse(await fs.readFile(path.join(dir, 'precompressor-manifest.json'), 'utf8'));
    const byEnc = m.files[REL].deltas[h1];
    best = Object.keys(byEnc).sort((a, b) => byEnc[a].size - byEnc[b].size)[0];
  });
  afterAll(() => fs.rm(work, { recursive: true, force: true }));
  beforeEach(async () => {
    mw = serveStatic(dir, { watch: false });
    server = await listen((req, res) => mw(req, res));
  });
  afterEach(async () => {
    mw.close();
    await server.close();
  });
  const get = (headers, method = 'GET') => request(server.port, `/${REL}`, { method, headers });

  test('a browser that offers the previous version gets the delta, with every header RFC 9842 asks for', async () => {
    const r = await get({ 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:` });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe(best);
    expect(r.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
    expect(r.headers['use-as-dictionary']).toBe('match="index-*.js", match-dest=("script")');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(decodeDelta(best, r.body, Buffer.from(v1)).toString()).toBe(v2);
    const plain = await get({ 'accept-encoding': ACCEPT });
    expect(r.headers.etag).toMatch(/^"[^"]+"$/);
    expect(r.headers.etag).not.toBe(plain.headers.etag);
    expect(r.body.length * 10).toBeLessThan(plain.body.length);
  });

  test('every response of the file varies on Available-Dictionary and offers it as a dictionary', async () => {
    for (const headers of [{ 'accept-encoding': ACCEPT }, {}, { 'accept-encoding': 'gzip' }]) {
      const r = await get(headers);
      expect(String(r.headers['content-encoding'])).not.toMatch(/dc[bz]/);
      expect(r.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
      expect(r.headers['use-as-dictionary']).toBe('match="index-*.js", match-dest=("script")');
    }
    // Nothing acceptable: the identity bytes, as express.static sends them (no 406), still varying.
    const nothing = await get({ 'accept-encoding': 'identity;q=0, *;q=0' });
    expect(nothing.status).toBe(200);
    expect(nothing.headers['content-encoding']).toBeUndefined();
    expect(nothing.body.toString()).toBe(v2);
    expect(nothing.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
  });

  test.each([
    ['an unknown hash', { 'available-dictionary': `:${sha('other')}:` }],
    ['a malformed value', { 'available-dictionary': h1 }],
    ['dcb and dcz only through *', { 'available-dictionary': `:${h1}:`, 'accept-encoding': 'br, *' }],
    ['dcb and dcz refused', { 'available-dictionary': `:${h1}:`, 'accept-encoding': 'br, dcb;q=0, dcz;q=0' }],
    ['a cross-site no-cors request', { 'available-dictionary': `:${h1}:`, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }],
  ])('%s: the ordinary variant', async (_name, extra) => {
    const r = await get({ 'accept-encoding': ACCEPT, ...extra });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('br');
    expect(r.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
  });

  test('Range, HEAD and If-None-Match apply to the delta as the selected representation', async () => {
    const full = await get({ 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:` });
    const part = await get({ 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:`, range: 'bytes=0-9' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 0-9/${full.body.length}`);
    expect(part.headers['content-encoding']).toBe(best);
    expect(part.body.equals(full.body.subarray(0, 10))).toBe(true);
    const head = await get({ 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:` }, 'HEAD');
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(full.body.length));
    const cached = await get({ 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:`, 'if-none-match': String(full.headers.etag) });
    expect(cached.status).toBe(304);
    expect(cached.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
    const unsatisfiable = await get({ 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:`, range: `bytes=${full.body.length}-` });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers['content-range']).toBe(`bytes */${full.body.length}`);
  });

  test('a delta changed or removed on disk is never sent: the identity file instead', async () => {
    const names = (await fs.readdir(path.join(dir, 'assets'))).filter((n) => n.endsWith(`.${best}`));
    expect(names).toHaveLength(1);
    const file = path.join(dir, 'assets', names[0]);
    const saved = await fs.readFile(file);
    try {
      await fs.writeFile(file, Buffer.concat([saved, Buffer.from('corrupt')]));
      const r = await get({ 'accept-encoding': best, 'available-dictionary': `:${h1}:` });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.body.toString()).toBe(v2);
      await mw.settled();
      const again = await get({ 'accept-encoding': best, 'available-dictionary': `:${h1}:` });
      expect(again.headers['content-encoding']).toBeUndefined();
      expect(again.body.toString()).toBe(v2);
      await fs.rm(file);
      const gone = await get({ 'accept-encoding': best, 'available-dictionary': `:${h1}:` });
      expect(gone.headers['content-encoding']).toBeUndefined();
      expect(gone.body.toString()).toBe(v2);
    } finally {
      await fs.writeFile(file, saved);
    }
  });

  test('watch: a delta rewritten on disk with the same size is never sent (its hash is checked on the re-check)', async () => {
    const watched = serveStatic(dir, {});
    const s = await listen((req, res) => watched(req, res));
    const assets = path.join(dir, 'assets');
    const name = (await fs.readdir(assets)).find((n) => n.endsWith(`.${best}`));
    const file = path.join(assets, /** @type {string} */ (name));
    const saved = await fs.readFile(file);
    const ask = () => request(s.port, `/${REL}`, { headers: { 'accept-encoding': best, 'available-dictionary': `:${h1}:` } });
    try {
      expect((await ask()).headers['content-encoding']).toBe(best);
      const seen = changed(assets, /** @type {string} */ (name));
      const bad = Buffer.from(saved);
      bad[bad.length - 5] ^= 0xff;
      await fs.writeFile(file, bad);
      await seen;
      await watched.settled();
      const r = await ask();
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.body.toString()).toBe(v2);
    } finally {
      await fs.writeFile(file, saved);
      watched.close();
      await s.close();
    }
  });

  test('dictionaries: false sends neither Use-As-Dictionary nor deltas; immutableHashed: false keeps maxAge', async () => {
    const off = serveStatic(dir, { watch: false, dictionaries: false });
    const s = await listen((req, res) => off(req, res));
    try {
      const r = await request(s.port, `/${REL}`, { headers: { 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:` } });
      expect(r.headers['content-encoding']).toBe('br');
      expect(r.headers['use-as-dictionary']).toBeUndefined();
      expect(r.headers.vary).toBe('Accept-Encoding');
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable'); // a hashed name, dictionaries or not
    } finally {
      off.close();
      await s.close();
    }
    const mutable = serveStatic(dir, { watch: false, immutableHashed: false, maxAge: '1h' });
    const s2 = await listen((req, res) => mutable(req, res));
    try {
      const r = await request(s2.port, `/${REL}`, { headers: { 'accept-encoding': ACCEPT, 'available-dictionary': `:${h1}:` } });
      expect(r.headers['content-encoding']).toBe(best);
      expect(r.headers['cache-control']).toBe('public, max-age=3600');
    } finally {
      mutable.close();
      await s2.close();
    }
  });
});
