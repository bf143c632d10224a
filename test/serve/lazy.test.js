import fs from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { ManifestIndex, runIndex, runIndexAsync, reloadSlices } from '../../lib/serve/manifest-index/manifest-index.js';
import { manifestText } from '../../lib/manifest/manifest.js';
import { pathsTouchedBy } from '../../lib/serve/site/file-events.js';
import { BodyCache } from '../../lib/serve/bodies/body-cache.js';
import { makeSite, decode, hashOf, serveSite, listen, request } from '../helpers/serve-site.js';

// serveStatic builds a path's entry on its first request (lib/serve/site/site.js): these tests pin what
// that must never change, whatever happens on disk between startup and that request.

const cleanup = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

const serve = (files, options = {}) => serveSite(serveStatic, cleanup, files, options);

/** Text that compresses, distinct per `seed`, of `n` lines. */
const textOf = (seed, n = 300) => Array.from({ length: n }, (_, i) => `line ${i} of ${seed}: ${(seed * 7919 + i * 104729) % 100003}\n`).join('');
const SMALL = textOf(1); // under memoryFileLimit: hashed on first check
const LARGE = textOf(2, 4000); // over it: checked by size and mtime

/** A response is whole and its bytes are `expected` once decoded. */
function expectWhole(res, expected) {
  expect(res.status).toBe(200);
  expect(Number(res.headers['content-length'])).toBe(res.body.length);
  expect(decode(res).toString()).toBe(expected);
}

describe.each([
  ['watch off', { watch: false }],
  ['watch off, from disk', { watch: false, memoryBudget: 0 }],
  ['watch on', {}],
])('a file changed after startup, before its first request (%s)', (_name, options) => {
  test.each([['small', SMALL], ['large', LARGE]])('%s file rewritten with other bytes: its old variants are never sent', async (_size, before) => {
    const s = await serve({ 'a.txt': before }, options);
    const after = before.replace('line 0', 'LINE 0'); // same size, other bytes, newer mtime
    await fs.writeFile(path.join(s.dir, 'a.txt'), after);
    await s.mw.settled();
    for (const ae of ['br', 'gzip', 'identity']) expectWhole(await s.get('/a.txt', { 'accept-encoding': ae }), after);
  });

  test('file rewritten with another size', async () => {
    const s = await serve({ 'a.txt': SMALL }, options);
    await fs.writeFile(path.join(s.dir, 'a.txt'), 'short now\n');
    await s.mw.settled();
    const res = await s.get('/a.txt', { 'accept-encoding': 'br' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expectWhole(res, 'short now\n');
  });

  test('file deleted (its variants left behind): 404, never a variant', async () => {
    const s = await serve({ 'a.txt': SMALL, 'b.txt': textOf(3) }, options);
    await fs.rm(path.join(s.dir, 'a.txt'));
    await s.mw.settled();
    expect((await s.get('/a.txt', { 'accept-encoding': 'br' })).status).toBe(404);
    expectWhole(await s.get('/b.txt', { 'accept-encoding': 'br' }), textOf(3));
  });

  test('a variant replaced by another of the same size, the original by other bytes: the original, never the wrong bytes', async () => {
    const s = await serve({ 'a.txt': LARGE }, { ...options, memoryBudget: 0 });
    const br = path.join(s.dir, 'a.txt.br');
    const size = (await fs.stat(br)).size;
    await fs.writeFile(br, Buffer.alloc(size, 0x41));
    const after = LARGE.replace('line 0', 'LINE 0'); // the build rewrote the original too (same size, newer mtime)
    await fs.writeFile(path.join(s.dir, 'a.txt'), after);
    await s.mw.settled();
    const res = await s.get('/a.txt', { 'accept-encoding': 'br' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expectWhole(res, after);
  });

  test('the original rewritten with its own bytes (mtime moved): its content is compared, its variants still sent', async () => {
    const s = await serve({ 'a.txt': LARGE }, { ...options, memoryBudget: 0 });
    await fs.writeFile(path.join(s.dir, 'a.txt'), LARGE);
    await s.mw.settled();
    for (const ae of ['br', 'gzip']) {
      const res = await s.get('/a.txt', { 'accept-encoding': ae });
      expect(res.headers['content-encoding']).toBe(ae);
      expectWhole(res, LARGE);
    }
    expect(s.mw.memory().hashed).toBe(1);
  });
});

test('paths asked for the first time while the manifest is being replaced get whole, current bodies', async () => {
  const names = Array.from({ length: 24 }, (_, i) => `p${i}.txt`);
  const s = await serve(Object.fromEntries(names.map((n, i) => [n, textOf(i)])), { watch: false });
  // the next build: every file rewritten, then its manifest
  const next = Object.fromEntries(names.map((n, i) => [n, textOf(i + 100)]));
  await makeSite(next, { dir: s.dir });
  const first = names.map((n, i) => s.get(`/${n}`, { 'accept-encoding': ['br', 'gzip', 'identity'][i % 3] }));
  const reloading = s.mw.reload();
  const during = await Promise.all([...first, ...names.map((n) => s.get(`/${n}`, { 'accept-encoding': 'br' }))]);
  await reloading;
  during.forEach((res, k) => expectWhole(res, next[names[k % names.length]]));
  // once the new manifest is in, its variants are served again
  for (const n of names) {
    const res = await s.get(`/${n}`, { 'accept-encoding': 'br' });
    expect(res.headers['content-encoding']).toBe('br');
    expectWhole(res, next[n]);
  }
});

test('a new manifest indexed in batches: requests in between get whole, current bodies', async () => {
  const names = Array.from({ length: 12 }, (_, i) => `d/p${i}.txt`);
  const s = await serve(Object.fromEntries(names.map((n, i) => [n, textOf(i)])), { watch: false });
  const next = Object.fromEntries(names.map((n, i) => [n, textOf(i + 100)]));
  const { manifest } = await makeSite(next, { dir: s.dir });
  // 70,000 paths more (listed, not on disk): more lines than one batch of the index
  const hash = hashOf(Buffer.from('x'));
  for (let i = 0; i < 70000; i++) manifest.files[`e/${i % 50}/f${i}.txt`] = { size: 1, mtimeMs: 1, hash, variants: {} };
  await fs.writeFile(s.manifestPath, [...manifestText(manifest)].join(''));
  const reloading = s.mw.reload();
  const during = await Promise.all(names.map((n, i) => s.get(`/${n}`, { 'accept-encoding': ['br', 'gzip', 'identity'][i % 3] })));
  await reloading;
  during.forEach((res, k) => expectWhole(res, next[names[k]]));
  expect(s.mw.size()).toBe(70012);
  for (const n of names) {
    const res = await s.get(`/${n}`, { 'accept-encoding': 'br' });
    expect(res.headers['content-encoding']).toBe('br');
    expectWhole(res, next[n]);
  }
  expect((await s.get('/e/3/f3.txt')).status).toBe(404); // listed, not on disk
});

test('a reload in slices: between them the old manifest answers whole; the new one at once when done', async () => {
  const names = Array.from({ length: 10 }, (_, i) => `d/p${i}.txt`);
  const s = await serve(Object.fromEntries([...names.map((n, i) => [n, textOf(i)]), ['old.txt', textOf(50)]]), { watch: false });
  for (const n of names.slice(0, 5)) expect((await s.get(`/${n}`, { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
  // the next manifest: the same files without their br variants, old.txt gone, new.txt (on disk already) in
  const newTxt = textOf(60);
  await fs.writeFile(path.join(s.dir, 'new.txt'), newTxt);
  const files = structuredClone(s.manifest.files);
  delete files['old.txt'];
  for (const e of Object.values(files)) delete e.variants.br;
  files['new.txt'] = { size: Buffer.byteLength(newTxt), mtimeMs: (await fs.stat(path.join(s.dir, 'new.txt'))).mtimeMs, hash: hashOf(Buffer.from(newTxt)), variants: {} };
  for (let i = 0; i < 300; i++) files[`e/${i % 5}/f${i}.txt`] = { size: 1, mtimeMs: 1, hash: hashOf(Buffer.from('x')), variants: {} };
  await fs.writeFile(s.manifestPath, [...manifestText({ ...s.manifest, files })].join(''));
  /** What every path gets now: each listed path whole, with br (old manifest) or gzip (new) */
  const answers = async () => {
    const got = await Promise.all(names.map((n) => s.get(`/${n}`, { 'accept-encoding': 'br, gzip' })));
    got.forEach((res, k) => expectWhole(res, textOf(k)));
    const encodings = new Set(got.map((res) => res.headers['content-encoding']));
    expect(encodings.size).toBe(1);
    return { encoding: [...encodings][0], old: (await s.get('/old.txt')).status, new: (await s.get('/new.txt')).status };
  };
  const saved = { ...reloadSlices };
  /** @type {unknown[]} */
  const between = [];
  Object.assign(reloadSlices, { lines: 16, pause: async () => between.push(await answers()) });
  try {
    await s.mw.reload();
  } finally {
    Object.assign(reloadSlices, saved);
  }
  // 311 lines: their scan and their table in slices of 16, each time the old manifest answering
  expect(between.length).toBeGreaterThanOrEqual(2 * Math.floor(311 / 16));
  expect(new Set(between.map((b) => JSON.stringify(b)))).toEqual(new Set([JSON.stringify({ encoding: 'br', old: 200, new: 404 })]));
  expect(await answers()).toEqual({ encoding: 'gzip', old: 404, new: 200 });
  expectWhole(await s.get('/new.txt'), newTxt);
});

test('the body cache holds at most memoryBudget bytes under a request mix larger than it', async () => {
  const files = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}.txt`, textOf(i, 40 + i * 3)]));
  const budget = 24 * 1024;
  const s = await serve(files, { watch: false, memoryBudget: budget });
  const all = Object.values(files).reduce((n, t) => n + Buffer.byteLength(t), 0);
  expect(all).toBeGreaterThan(3 * budget);
  let x = 7;
  for (let round = 0; round < 12; round++) {
    const batch = Array.from({ length: 25 }, () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const rel = `f${x % 60}.txt`;
      return s.get(`/${rel}`, { 'accept-encoding': ['br', 'gzip', 'identity'][(x >> 8) % 3] }).then((res) => expectWhole(res, files[rel]));
    });
    await Promise.all(batch);
    const m = s.mw.memory();
    expect(m.bodyBytes).toBeLessThanOrEqual(budget);
    expect(m.bodies).toBeGreaterThan(0);
  }
});

describe('BodyCache', () => {
  const holder = () => ({ body: null, used: false, prev: null, next: null });
  test('keeps the bytes under the cap and evicts what was not used since the hand passed', () => {
    const c = new BodyCache(100);
    const hs = Array.from({ length: 10 }, holder);
    hs.slice(0, 5).forEach((h) => c.add(h, Buffer.alloc(20)));
    expect(c.bytes).toBe(100);
    hs[0].used = true; // sent again: it survives the next eviction
    c.add(hs[5], Buffer.alloc(20));
    expect(c.bytes).toBe(100);
    expect(hs[0].body).not.toBeNull();
    expect(hs[1].body).toBeNull();
    c.add(hs[6], Buffer.alloc(101)); // larger than the cap: never held
    expect(hs[6].body).toBeNull();
    c.drop(hs[0]);
    expect(c.bytes).toBe(80);
    for (let i = 0; i < 1000; i++) {
      const h = hs[i % 10];
      if (h.body === null) c.add(h, Buffer.alloc(1 + (i % 37)));
      else h.used = i % 3 === 0;
      expect(c.bytes).toBeLessThanOrEqual(100);
      expect(c.bytes).toBe(hs.reduce((n, k) => n + (k.body?.length ?? 0), 0));
    }
  });
});

describe('ManifestIndex', () => {
  const hash = hashOf(Buffer.from('x'));
  const head = { schema: 3, tool: 't', settings: { encodings: ['br'] }, generatedAt: 'now' };
  const files = {
    'a.js': { size: 10, mtimeMs: 1.5, hash, variants: { br: { size: 4 }, gzip: { size: 6 } } },
    'd/b.css': { size: 0, mtimeMs: 2, hash, variants: {}, skipped: 'empty' },
    'd/e/c.bin': { size: 9, mtimeMs: 3, hash: 'not-ours', variants: { zstd: { size: 1 } } },
    'q"uote\u00e9.txt': { size: 3, mtimeMs: 4, hash, type: 'text/x-dat', variants: {} },
    'x/y.pctmp': { size: 1, mtimeMs: 1, hash, variants: {} },
    'precompressor-manifest.json': { size: 1, mtimeMs: 1, hash, variants: {} },
  };
  const lines = (m) => Buffer.from([...manifestText(m)].join(''));
  const index = (bytes, manifestRel = 'precompressor-manifest.json') => runIndex(ManifestIndex.of(bytes, 'm.json', manifestRel));

  test.each([
    ['one line per file', lines({ ...head, files })],
    ['indented (earlier versions)', Buffer.from(JSON.stringify({ ...head, files }, null, 1))],
    ['on one line (another writer)', Buffer.from(JSON.stringify({ ...head, files }))],
  ])('gives back each servable entry as the manifest has it (%s)', (_layout, bytes) => {
    const ix = index(bytes);
    expect(ix.size).toBe(4);
    for (const rel of ['a.js', 'd/b.css', 'd/e/c.bin', 'q"uote\u00e9.txt']) expect(ix.parsed(rel)).toEqual({ entry: files[rel] });
    expect(ix.has('precompressor-manifest.json')).toBe(false);
    expect(ix.has('x/y.pctmp')).toBe(false);
    for (const rel of ['nope', 'd', 'a.j', 'a.jsx', '']) expect(ix.parsed(rel)).toBeNull();
    expect([...ix.dirs].sort()).toEqual(['', 'd', 'd/e']);
  });

  test('a path listed twice is the last line, as JSON.parse reads it', () => {
    const bytes = lines({ ...head, files: { 'a.js': files['a.js'], 'b.js': files['a.js'] } });
    const twice = Buffer.from(bytes.toString().replace('"b.js"', '"a.js"').replace('"size":10,', '"size":11,'));
    const ix = index(twice);
    expect(ix.size).toBe(1);
    expect(/** @type {any} */ (ix.parsed('a.js')).entry.size).toBe(10);
  });

  test('an invalid line is found on its path\'s first lookup, the others are served', () => {
    const text = lines({ ...head, files }).toString()
      .replace('"a.js": {"size":10,', '"a.js": {"size":-1,')
      .replace('"d/b.css": {"size":0', '"d/b.css": {"size":0,}');
    const ix = index(Buffer.from(text));
    expect(ix.parsed('a.js')).toEqual({ problem: 'entry "a.js" has no valid size' });
    expect(ix.parsed('d/b.css')).toEqual({ problem: 'entry "d/b.css" is not valid JSON' });
    expect(ix.entry('a.js')).toBeUndefined();
    expect(ix.parsed('d/e/c.bin')).toEqual({ entry: files['d/e/c.bin'] });
  });

  test('two entries on one line are not served', () => {
    const text = lines({ ...head, files }).toString().replace(',\n  "d/b.css"', ', "d/b.css"');
    const ix = index(Buffer.from(text));
    expect(ix.parsed('a.js')).toEqual({ problem: 'the line of "a.js" is not one entry' });
    expect(ix.parsed('d/b.css')).toBeNull();
  });

  test.each([
    ['not JSON', '{', /not valid JSON/],
    ['a bad head', '{\n "schema": 9,\n "files": {\n  "a": {}\n }\n}\n', /schema 9/],
    ['truncated', null, /not valid JSON/],
    ['a bad entry in another layout', JSON.stringify({ ...head, files: { '../x': files['a.js'] } }), /file path/],
  ])('a manifest that is %s is refused whole', (_what, text, message) => {
    const bytes = Buffer.from(text ?? lines({ ...head, files }).toString().slice(0, -12));
    expect(() => index(bytes)).toThrow(expect.objectContaining({ code: 'ERR_PRECOMPRESSOR_MANIFEST', message: expect.stringMatching(message) }));
  });

  test('the site dictionary\'s line is validated when the manifest is read', () => {
    const sd = { siteDictionary: { path: 'a.js', hash } };
    expect(index(lines({ ...head, ...sd, files })).siteDictionary).toBe('a.js');
    const text = lines({ ...head, ...sd, files }).toString().replace('"a.js": {"size":10,', '"a.js": {"size":-1,');
    expect(() => index(Buffer.from(text))).toThrow(/siteDictionary/);
  });

  test('grows past its first arrays, built in batches in the background as at once', async () => {
    const many = {};
    for (let i = 0; i < 70000; i++) many[`f/${i % 7}/${i}`] = { size: i, mtimeMs: i, hash, variants: { br: { size: i % 7 } } };
    const bytes = lines({ ...head, files: many });
    const ix = await runIndexAsync(ManifestIndex.of(bytes, 'm.json', null));
    expect(ix.size).toBe(70000);
    expect(ix.dirs.size).toBe(9);
    for (const i of [0, 1023, 1024, 65536, 69999]) expect(ix.entry(`f/${i % 7}/${i}`)).toEqual(many[`f/${i % 7}/${i}`]);
    expect(ix.has('f/0/70000')).toBe(false);
  });
});

describe('a manifest in one line per file with an invalid line', () => {
  const FILES = { 'a.txt': SMALL, 'b.txt': textOf(3) };
  const spoil = async (file) => {
    const text = await fs.readFile(file, 'utf8');
    await fs.writeFile(file, text.replace('"a.txt": {', '"a.txt": {"type":"text/plain\\r\\nSet-Cookie: a=1",'));
  };
  const expectServedButA = async (s, warnings) => {
    for (let i = 0; i < 2; i++) expect((await s.get('/a.txt', { 'accept-encoding': 'br' })).status).toBe(404);
    expectWhole(await s.get('/b.txt', { 'accept-encoding': 'br' }), textOf(3));
    expect(warnings.filter((w) => w.includes('invalid manifest'))).toEqual([expect.stringContaining('entry "a.txt" has an invalid type')]);
  };

  test('at start-up: every other path is served; that one is a miss, said once', async () => {
    const site = await makeSite(FILES);
    await spoil(site.manifestPath);
    const warnings = [];
    const mw = serveStatic(site.dir, { watch: false, onWarning: (m) => warnings.push(m) });
    const srv = await listen(mw);
    cleanup.push(async () => {
      mw.close();
      await srv.close();
      await fs.rm(site.dir, { recursive: true, force: true });
    });
    await expectServedButA({ get: (p, headers) => request(srv.port, p, { headers }) }, warnings);
  });

  test('the start-up audit says it before any request for that path', async () => {
    const site = await makeSite(FILES);
    await spoil(site.manifestPath);
    const warnings = [];
    let said;
    const saying = new Promise((resolve) => { said = resolve; });
    const mw = serveStatic(site.dir, { watch: false, onWarning: (m) => { warnings.push(m); if (m.includes('invalid manifest')) said(); } });
    const srv = await listen(mw);
    cleanup.push(async () => {
      mw.close();
      await srv.close();
      await fs.rm(site.dir, { recursive: true, force: true });
    });
    await saying;
    await expectServedButA({ get: (p, headers) => request(srv.port, p, { headers }) }, warnings);
  });

  test('on reload: the same', async () => {
    const warnings = [];
    const s = await serve(FILES, { watch: false, onWarning: (m) => warnings.push(m) });
    expectWhole(await s.get('/a.txt', { 'accept-encoding': 'br' }), SMALL);
    await spoil(s.manifestPath);
    await s.mw.reload();
    await expectServedButA(s, warnings);
  });
});

test('an event names the paths it may have made stale', () => {
  expect(pathsTouchedBy('d/a.js')).toEqual(['d/a.js']);
  expect(pathsTouchedBy('d/a.js.br')).toEqual(['d/a.js.br', 'd/a.js']);
  expect(pathsTouchedBy('a.js.0123456789abcdef.dcz')).toEqual(['a.js.0123456789abcdef.dcz', 'a.js']);
  expect(pathsTouchedBy('d/e/*')).toBe('d/e');
  expect(pathsTouchedBy('*')).toBe('');
});
