import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readManifest, readManifestSync, validateManifest, MAX_MANIFEST_BYTES } from '../lib/manifest/manifest.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Reading a manifest from a hostile file system (issue 17, items 11, 12 and 15): a FIFO or a
 * device at the manifest's path, a manifest larger than the limit, values that would make a
 * header invalid.
 */

const entry = (extra = {}) => ({ size: 1, mtimeMs: 1_700_000_000_000, hash: 'sha256-x', variants: {}, ...extra });
const doc = (files) => ({ schema: 2, tool: 't', settings: {}, generatedAt: '', files });

let dir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

/** A FIFO nobody writes to; unblocked at the end (a reader stuck in open() would hold a libuv thread). */
function makeFifo(name) {
  const p = path.join(dir, name);
  execFileSync('mkfifo', [p]);
  return p;
}
function unblock(p) {
  try {
    fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
  } catch {
    // no reader waiting: nothing to unblock
  }
}

const posix = process.platform === 'win32' ? test.skip : test;

posix('a FIFO at the manifest path is refused at once (async and sync), not waited on', async () => {
  const fifo = makeFifo('fifo.json');
  try {
    await expect(readManifest(fifo)).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST', message: expect.stringContaining('not a regular file') });
    expect(() => readManifestSync(fifo)).toThrow(/not a regular file/);
  } finally {
    unblock(fifo);
  }
});

posix('a character device at the manifest path is refused without reading it', async () => {
  await expect(readManifest('/dev/zero')).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST', message: expect.stringContaining('not a regular file') });
  expect(() => readManifestSync('/dev/zero')).toThrow(/not a regular file/);
});

test('a manifest above the size limit is refused before it is read; the limit can be raised', async () => {
  const file = path.join(dir, 'big.json');
  const text = JSON.stringify(doc({ 'a.txt': entry() }));
  await fsp.writeFile(file, text);
  const limit = text.length - 1;
  await expect(readManifest(file, { maxBytes: limit })).rejects.toMatchObject({
    code: 'ERR_PRECOMPRESSOR_MANIFEST', message: expect.stringContaining(`above the limit of ${limit} bytes`),
  });
  expect(() => readManifestSync(file, { maxBytes: limit })).toThrow(/maxManifestBytes/);
  expect((await readManifest(file, { maxBytes: text.length }))?.files['a.txt'].size).toBe(1);
  expect(readManifestSync(file, { maxBytes: text.length })?.files['a.txt'].size).toBe(1);
  // the default holds a site of a million files (~360 bytes per entry as the writer indents it)
  expect(MAX_MANIFEST_BYTES).toBeGreaterThanOrEqual(1_000_000 * 360);
});

test('a missing manifest is still null', async () => {
  expect(await readManifest(path.join(dir, 'none.json'))).toBeNull();
  expect(readManifestSync(path.join(dir, 'none.json'))).toBeNull();
});

test.each([
  [1e308, 'mtimeMs'], [-1e16, 'mtimeMs'], [Infinity, 'mtimeMs'], [NaN, 'mtimeMs'],
])('mtimeMs %p is refused (it would make Last-Modified "Invalid Date")', (mtimeMs) => {
  expect(() => validateManifest(doc({ 'a.txt': entry({ mtimeMs }) }))).toThrow(/no valid mtimeMs/);
});

test.each([
  ['text/html\r\nSet-Cookie: a=1'], ['text/html\n'], ['text/\u0000html'], ['text/html\u0100'], [42],
])('content type %p is refused (it would make a header invalid)', (type) => {
  expect(() => validateManifest(doc({ 'a.txt': entry({ type }) }))).toThrow(/invalid type/);
});

test('valid dates and types still pass', () => {
  const m = validateManifest(doc({ 'a.txt': entry({ mtimeMs: 0, type: 'text/plain; charset=utf-8' }), 'b.txt': entry({ mtimeMs: 8.64e15 }) }));
  expect(Object.keys(m.files)).toEqual(['a.txt', 'b.txt']);
});
