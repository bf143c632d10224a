import fs from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { isOurOutput } from '../../lib/serve/site/unlisted.js';
import { listen, request } from '../helpers/serve-site.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';

// With `unlisted`, files the manifest does not list are served from disk; our own outputs (the
// variants and deltas of listed files) are not files of the site: never sent by their own URL, as
// octet-stream, which docs/deltas.md asks of every server. 404, as for our temp files.

let dir;
beforeEach(async () => {
  dir = await tempDir('pc-unlisted-out-');
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

test('isOurOutput: a variant or delta name the manifest does not list (the site policy); never a listed file', () => {
  const listed = new Set(['app.js', 'docs/page.html', 'data.json', 'data.json.gz']);
  const has = (/** @type {string} */ rel) => listed.has(rel);
  for (const rel of ['app.js.br', 'app.js.gz', 'app.js.zst', 'docs/page.html.br', 'app.js.0123456789abcdef.dcb',
    'x.js.0123456789abcdef.dcz', 'late.tar.gz', 'precompressor-manifest.json.pcindex']) expect([rel, isOurOutput(rel, has)]).toEqual([rel, true]);
  for (const rel of ['app.js', 'data.json.gz', 'app.js.dcb', 'notes.txt'])
    expect([rel, isOurOutput(rel, has)]).toEqual([rel, false]);
});

test('a real build served with unlisted: its variants and deltas get 404 by their own URL; the files, and a listed .gz, are served', async () => {
  await writeSite(dir, 8);
  await writeTree(dir, { 'app.js': textOf(20000), 'backup.tar.gz': 'not ours' }); // listed: a file of the site
  expect((await precompress(dir)).ok).toBe(true);
  await writeTree(dir, { 'late.tar.gz': 'written after the pass', 'late.html': '<p>written after the pass</p>' });
  const names = [];
  for (const d of ['', 'docs']) for (const n of await fs.readdir(path.join(dir, d))) names.push(d === '' ? n : `${d}/${n}`);
  const outputs = names.filter((n) => /\.(br|gz|zst|dcb|dcz|pcindex)$/.test(n) && n !== 'backup.tar.gz'); // late.tar.gz: taken for ours
  expect(outputs).toEqual(expect.arrayContaining(['app.js.br', 'app.js.gz', 'index.html.br', 'docs/page-1.html.gz',
    'precompressor-manifest.json.pcindex']));
  if (deltaEncoders().length > 0) expect(outputs.some((n) => /\.[0-9a-f]{16}\.dc[bz]$/.test(n))).toBe(true);

  const mw = serveStatic(dir, { unlisted: true, watch: false });
  const srv = await listen(mw);
  try {
    for (const rel of outputs) {
      for (const method of ['GET', 'HEAD']) expect([rel, method, (await request(srv.port, `/${rel}`, { method })).status]).toEqual([rel, method, 404]);
    }
    for (const rel of ['app.js', 'index.html', 'docs/page-1.html', 'backup.tar.gz', 'late.html']) {
      expect([rel, (await request(srv.port, `/${rel}`)).status]).toEqual([rel, 200]);
    }
    expect((await request(srv.port, '/backup.tar.gz')).body.toString()).toBe('not ours');
  } finally {
    mw.close();
    await srv.close();
  }
});
