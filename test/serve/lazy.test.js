import fs from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '../../lib/serve/middleware.js';
import { SiteIndex } from '../../lib/serve/site-index.js';
import { BodyCache } from '../../lib/serve/body-cache.js';
import { makeSite, decode, hashOf, serveSite } from '../helpers/serve-site.js';

// serveStatic builds a path's entry on its first request (lib/serve/site.js): these tests pin what
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

  test('a variant replaced by another of the same size: the original, never the wrong bytes', async () => {
    const s = await serve({ 'a.txt': LARGE }, { ...options, memoryBudget: 0 });
    const br = path.join(s.dir, 'a.txt.br');
    const size = (await fs.stat(br)).size;
    await fs.writeFile(br, Buffer.alloc(size, 0x41));
    await fs.writeFile(path.join(s.dir, 'a.txt'), LARGE); // the build rewrote the original too (same bytes, newer mtime)
    await s.mw.settled();
    const res = await s.get('/a.txt', { 'accept-encoding': 'br' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expectWhole(res, LARGE);
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
  const holder = () => ({ body: null });
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

describe('SiteIndex', () => {
  test('gives back each servable entry as the manifest has it', () => {
    const hash = hashOf(Buffer.from('x'));
    const files = {
      'a.js': { size: 10, mtimeMs: 1.5, hash, variants: { br: { size: 4 }, gzip: { size: 6 } } },
      'd/b.css': { size: 0, mtimeMs: 2, hash, variants: {}, skipped: 'empty' },
      'd/e/c.bin': { size: 9, mtimeMs: 3, hash: 'not-ours', variants: { zstd: { size: 1 } } },
      't.dat': { size: 3, mtimeMs: 4, hash, type: 'text/x-dat', variants: {} },
      'precompressor-manifest.json': { size: 1, mtimeMs: 1, hash, variants: {} },
    };
    const index = new SiteIndex('precompressor-manifest.json', /** @type {any} */ ({ settings: {}, files }));
    expect(index.size).toBe(4);
    expect(index.entry('a.js')).toEqual(files['a.js']);
    expect(index.entry('d/b.css')).toEqual({ size: 0, mtimeMs: 2, hash, variants: {} });
    expect(index.entry('d/e/c.bin')).toBe(files['d/e/c.bin']);
    expect(index.entry('t.dat')).toBe(files['t.dat']);
    expect(index.has('precompressor-manifest.json')).toBe(false);
    expect(index.entry('nope')).toBeUndefined();
    expect([...index.dirs].sort()).toEqual(['', 'd', 'd/e']);
  });

  test('grows past its first arrays', () => {
    const files = {};
    for (let i = 0; i < 5000; i++) files[`f${i}`] = { size: i, mtimeMs: i, hash: hashOf(Buffer.from(String(i))), variants: { br: { size: i % 7 } } };
    const index = new SiteIndex(null, /** @type {any} */ ({ settings: {}, files }));
    for (const i of [0, 1023, 1024, 4999]) expect(index.entry(`f${i}`)).toEqual(files[`f${i}`]);
  });
});
