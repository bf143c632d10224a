import fs from 'node:fs/promises';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { readManifest } from '../../lib/manifest/manifest.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { listen, request, decode } from '../helpers/serve-site.js';

// A deploy copies the compressed folder the way deploys do (plain tar keeps whole seconds, zip two,
// `cp -r` none): the mtimes move, the bytes do not. The server compares such a file's content with
// the manifest's hash on its first request, once, and keeps serving its variants.

const cleanup = /** @type {Array<() => Promise<void>>} */ ([]);
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/** A subsecond mtime, so that a copy keeping whole seconds moves it. */
const STAMP = new Date(1_700_000_000_437);

/**
 * A compressed folder of `files` (all stamped at STAMP first), copied with plain `tar` to a new
 * folder; the copy's manifest and the copy.
 * @param {Record<string, string>} files
 */
async function tarCopyOf(files) {
  const src = await tempDir('pc-copy-src-');
  const dst = await tempDir('pc-copy-dst-');
  cleanup.push(() => fs.rm(src, { recursive: true, force: true }), () => fs.rm(dst, { recursive: true, force: true }));
  await writeTree(src, files);
  for (const rel of Object.keys(files)) await fs.utimes(path.join(src, rel), STAMP, STAMP);
  expect((await precompress(src, { deltas: false, encodings: ['br', 'gzip'] })).ok).toBe(true);
  execFileSync('sh', ['-c', 'tar -C "$1" -cf - . | tar -C "$2" -xf -', 'sh', src, dst]);
  const manifest = /** @type {import('../../lib/manifest/manifest.js').Manifest} */ (await readManifest(path.join(dst, 'precompressor-manifest.json')));
  return { dst, manifest };
}

/**
 * serveStatic on `dir` behind a node:http server, its warnings collected; the start-up audit's
 * message awaited (an unlisted `marker.txt` makes sure there is one).
 * @param {string} dir
 */
async function serveCopy(dir) {
  await fs.writeFile(path.join(dir, 'marker.txt'), 'not listed');
  const warnings = /** @type {string[]} */ ([]);
  let audited = () => {};
  const audit = new Promise((resolve) => (audited = () => resolve(undefined)));
  const mw = serveStatic(dir, { onWarning: (m) => (warnings.push(m), audited()) });
  const srv = await listen(mw);
  cleanup.push(async () => {
    mw.close();
    await srv.close();
  });
  await audit;
  const get = (/** @type {string} */ p, headers = {}) => request(srv.port, p, { headers });
  return { mw, get, warnings };
}

test('a folder copied with plain tar (whole-second mtimes) keeps its variants; the content is hashed on the first request only', async () => {
  const big = textOf(300_000);
  const files = { 'big.js': big, 'other.js': textOf(200_000, 5), 'small.css': textOf(3000, 9) };
  const { dst, manifest } = await tarCopyOf(files);
  const st = await fs.stat(path.join(dst, 'big.js'));
  expect(st.size).toBe(manifest.files['big.js'].size);
  expect(st.mtimeMs).not.toBe(manifest.files['big.js'].mtimeMs); // tar kept whole seconds: the premise
  expect(st.mtimeMs).toBe(Math.floor(STAMP.getTime() / 1000) * 1000);

  const { mw, get, warnings } = await serveCopy(dst);
  expect(warnings.join('\n')).not.toContain('changed since');
  expect(mw.memory().hashed).toBe(0); // nothing hashed at start-up

  for (const enc of ['br', 'gzip']) {
    const res = await get('/big.js', { 'accept-encoding': enc });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(enc);
    expect(res.headers['content-length']).toBe(String(manifest.files['big.js'].variants[enc]?.size));
    expect(decode(res).toString()).toBe(big);
  }
  const plain = await get('/big.js');
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.body.toString()).toBe(big);
  expect(plain.headers['last-modified']).toBe(st.mtime.toUTCString());
  expect(mw.memory().hashed).toBe(1);

  // forgotten and checked again (a reload): remembered by dev, ino, size and mtime, not hashed again
  await mw.reload();
  expect((await get('/big.js', { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
  expect(mw.memory().hashed).toBe(1);
  expect((await get('/other.js', { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
  expect((await get('/small.css', { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
  expect(mw.memory().hashed).toBe(2); // small.css is read whole (and hashed) by its check anyway
  expect(warnings).toHaveLength(1);
});

test('a copied file whose content really changed (same size, mtime moved) loses its variants, said once', async () => {
  const { dst, manifest } = await tarCopyOf({ 'big.js': textOf(300_000), 'keep.js': textOf(100_000, 3) });
  const edited = textOf(300_000, 4);
  await fs.writeFile(path.join(dst, 'big.js'), edited);
  expect((await fs.stat(path.join(dst, 'big.js'))).size).toBe(manifest.files['big.js'].size);

  const { get, warnings } = await serveCopy(dst);
  for (let i = 0; i < 2; i++) {
    const res = await get('/big.js', { 'accept-encoding': 'br, gzip' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.toString()).toBe(edited);
  }
  expect((await get('/keep.js', { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
  const changed = warnings.filter((w) => w.includes('big.js'));
  expect(changed).toEqual([expect.stringContaining('big.js changed since the manifest was written')]);
});
