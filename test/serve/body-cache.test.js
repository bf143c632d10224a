import fs from 'node:fs/promises';
import fssync from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { normalizeServeOptions } from '../../lib/serve/http/options.js';
import { SMALL_BODY } from '../../lib/serve/bodies/body-cache.js';
import { decode, serveSite } from '../helpers/serve-site.js';
import { changed } from '../helpers/changed.js';

// Bodies above the first check's read (SMALL_BODY, 64 KiB) are held in memory once sent, up to
// memoryFileLimit each and memoryBudget in all: served without a system call, dropped on change.

const cleanup = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

const serve = (files, options = {}) => serveSite(serveStatic, cleanup, files, options);

/** Text that compresses to about three quarters (base64 of random bytes), of about `n` bytes. */
const textOf = (n) => crypto.randomBytes(Math.ceil((n * 3) / 4)).toString('base64');


/** A response is whole, in `encoding`, and decodes to `expected`. */
function expectWhole(res, expected, encoding) {
  expect(res.status).toBe(200);
  expect(res.headers['content-encoding']).toBe(encoding);
  expect(Number(res.headers['content-length'])).toBe(res.body.length);
  expect(decode(res).toString()).toBe(expected);
}

test('memoryFileLimit defaults to a quarter of memoryBudget; a given one wins', () => {
  expect(normalizeServeOptions('/srv').memoryFileLimit).toBe(4 * 1024 * 1024);
  expect(normalizeServeOptions('/srv', { memoryBudget: 1000 }).memoryFileLimit).toBe(250);
  expect(normalizeServeOptions('/srv', { memoryFileLimit: 7 }).memoryFileLimit).toBe(7);
  expect(() => normalizeServeOptions('/srv', { memoryFileLimit: -1 })).toThrow(/memoryFileLimit/);
});

test('a body above 64 KiB is held after its first response: sent byte-exact with its files gone from disk', async () => {
  const text = textOf(300_000);
  const s = await serve({ 'big.txt': text }, { watch: false }); // watch off: nothing but memory can answer below
  const brSize = (await fs.stat(path.join(s.dir, 'big.txt.br'))).size;
  expect(brSize).toBeGreaterThan(SMALL_BODY);
  expect(text.length).toBeGreaterThan(SMALL_BODY);
  expectWhole(await s.get('/big.txt', { 'accept-encoding': 'br' }), text, 'br');
  expectWhole(await s.get('/big.txt', { 'accept-encoding': 'identity' }), text, undefined);
  expect(s.mw.memory()).toMatchObject({ bodies: 2, bodyBytes: brSize + text.length });
  // read from disk, the .br would be missing (the identity sent instead) and the original a 404
  for (const name of ['big.txt', 'big.txt.br', 'big.txt.gz']) await fs.rm(path.join(s.dir, name));
  for (let n = 0; n < 3; n++) {
    expectWhole(await s.get('/big.txt', { 'accept-encoding': 'br' }), text, 'br');
    expectWhole(await s.get('/big.txt', { 'accept-encoding': 'identity' }), text, undefined);
  }
  const range = await s.get('/big.txt', { 'accept-encoding': 'identity', range: 'bytes=70000-70009' });
  expect(range.status).toBe(206);
  expect(range.body.toString()).toBe(text.slice(70000, 70010));
});

test('a held body above 64 KiB is dropped when its file changes; the new file is sent', async () => {
  const text = textOf(300_000);
  const s = await serve({ 'big.txt': text });
  expectWhole(await s.get('/big.txt', { 'accept-encoding': 'br' }), text, 'br');
  expect(s.mw.memory().bodyBytes).toBeGreaterThan(SMALL_BODY);
  const next = textOf(300_000); // the same size, other bytes; the old .br stays on disk
  const seen = changed(s.dir, 'big.txt');
  await fs.writeFile(path.join(s.dir, 'big.txt'), next);
  await seen;
  expect(s.mw.memory()).toMatchObject({ bodies: 0, bodyBytes: 0 });
  for (const ae of ['br', 'identity']) expectWhole(await s.get('/big.txt', { 'accept-encoding': ae }), next, undefined);
});

test('large bodies stay within memoryBudget, the least recently used out; above memoryFileLimit they are streamed', async () => {
  const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, textOf(120_000 + i * 10_000)]));
  files['huge.txt'] = textOf(600_000);
  const budget = 512 * 1024;
  const s = await serve(files, { watch: false, memoryBudget: budget, memoryFileLimit: 256 * 1024 });
  const sizeOf = (rel) => fssync.statSync(path.join(s.dir, `${rel}.br`)).size;
  let held = 0;
  for (let round = 0; round < 3; round++) {
    for (const rel of Object.keys(files).filter((r) => r !== 'huge.txt')) {
      expectWhole(await s.get(`/${rel}`, { 'accept-encoding': 'br' }), files[rel], 'br');
      const m = s.mw.memory();
      expect(m.bodyBytes).toBeLessThanOrEqual(budget);
      expect(m.bodyBytes).toBeGreaterThanOrEqual(sizeOf(rel)); // the body just sent is held
      held = Math.max(held, m.bodies);
    }
  }
  expect(held).toBeGreaterThan(1);
  expect(held).toBeLessThan(8);
  const before = s.mw.memory();
  expect(sizeOf('huge.txt')).toBeGreaterThan(256 * 1024);
  expectWhole(await s.get('/huge.txt', { 'accept-encoding': 'br' }), files['huge.txt'], 'br');
  // over memoryFileLimit: streamed, nothing evicted for it
  expect(s.mw.memory()).toMatchObject({ bodies: before.bodies, bodyBytes: before.bodyBytes });
});
