import fsSync from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { readManifest, pathProblem } from '../../lib/manifest/manifest.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// File names the server would refuse, and folders the walk cannot enter (#17, items 7 and 9): the
// writer and the reader share one rule, such a name is reported and left out, the rest of the
// site is compressed and served, and later runs do not start afresh.

let root;
beforeEach(async () => {
  root = await tempDir('pc-names-');
});
afterEach(() => {
  execFileSync('rm', ['-rf', root]); // GNU rm walks folders deeper than PATH_MAX; fs.rm does not
});

const SITE = { 'index.html': `<!doctype html>${textOf(3000)}`, 'app.js': textOf(9000, 2) };

test.each([
  ['a backslash', 'a\\b.txt', /contains a backslash/],
  ['an escape sequence', 'x\x1b[31mred.txt', /contains a control character/],
  ['a line break', 'forged\nerror: x.txt', /contains a control character/],
  ['a C1 control', 'c1\u009b.txt', /contains a control character/],
])('a name with %s is reported and left out; the manifest is valid, served, and the next run changes nothing', async (_label, name, why) => {
  await writeTree(root, { ...SITE, [name]: textOf(5000, 3) });
  const r = await precompress(root);
  expect(r.ok).toBe(true);
  expect(r.warnings).toEqual([{ path: name, message: expect.stringMatching(why) }]);
  const m = await readManifest(path.join(root, 'precompressor-manifest.json')); // throws if the reader refused it
  expect(Object.keys(/** @type {any} */ (m).files).sort()).toEqual(['app.js', 'index.html']);
  expect(fsSync.existsSync(path.join(root, `${name}.br`))).toBe(false);
  expect(() => serveStatic(root)).not.toThrow();
  const again = await precompress(root);
  expect(again.files).toMatchObject({ compressed: 0, unchanged: 2, fromCache: 0 });
  expect(again.changes).toEqual([]);
});

test('one rule for the writer and the reader', () => {
  for (const ok of ['a.js', 'dir/b c.css', 'ünïcode/日本.html', '%41.txt', 'a..b', '..a']) expect(pathProblem(ok)).toBeNull();
  for (const bad of ['', '/abs', 'a\\b', 'a/../b', './a', 'a//b', 'a/', 'tab\there', 'del\x7f', 'nul\0', 'lone\ud800', 'bad\ufffdutf8']) {
    expect(pathProblem(bad)).not.toBeNull();
  }
});

test('a folder with CR/LF in its name is reported once, not left out silently', async () => {
  await writeTree(root, { ...SITE, 'ok/a.js': textOf(4000, 4), 'bad\r\ndir/b.js': textOf(4000, 5), 'bad\r\ndir/c.js': textOf(4000, 6) });
  const r = await precompress(root);
  expect(r.ok).toBe(true);
  expect(r.warnings).toEqual([{ path: 'bad\r\ndir', message: expect.stringMatching(/folder name contains a control character: its files are left out/) }]);
  expect(Object.keys(/** @type {any} */ (await readManifest(path.join(root, 'precompressor-manifest.json'))).files)).toEqual(['app.js', 'index.html', 'ok/a.js']);
});

test('a folder deeper than PATH_MAX is reported as a failure; every other file is compressed and the manifest written', async () => {
  await writeTree(root, SITE);
  const seg = 'd'.repeat(200);
  // 25 levels of 200 characters: 5,000 characters, over Linux's 4,096. Made relative, from inside.
  const make = `const fs = require('fs'); for (let i = 0; i < 25; i++) { fs.mkdirSync('${seg}'); process.chdir('${seg}'); } fs.writeFileSync('deep.txt', 'deep');`;
  execFileSync(process.execPath, ['-e', make], { cwd: root });
  const r = await precompress(root);
  expect(r.ok).toBe(false);
  expect(r.failures).toHaveLength(1);
  expect(r.failures[0]).toMatchObject({ code: 'ENAMETOOLONG' });
  expect(r.failures[0].path.startsWith(`${seg}/${seg}/`)).toBe(true);
  expect(fsSync.existsSync(path.join(root, 'app.js.br'))).toBe(true);
  const m = /** @type {any} */ (await readManifest(path.join(root, 'precompressor-manifest.json')));
  expect(Object.keys(m.files)).toEqual(['app.js', 'index.html']);
});
