import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { walk } from '../../lib/compress/plan/walk.js';
import { pass, precompress } from '../../lib/compress/pass/precompress.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

let root;
let outside;
beforeEach(async () => {
  root = await tempDir();
  outside = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

const manifestOf = async () => JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));

test('walking a folder at a time: each folder once, its files sorted, the same files, temps and links as the whole walk', async () => {
  await writeTree(root, {
    'index.html': 'i', 'b.txt': 'b', 'a/z.js': 'z', 'a/y.js': 'y', 'a/deep/x.css': 'x', 'c/w.svg': 'w',
    '.git/config': 'g', 'a/.env': 'e', '.x.pctmp': 't',
  });
  await fs.mkdir(path.join(root, 'a/.d.pctmp'));
  await fs.writeFile(path.join(root, 'a/.d.pctmp/inside.js'), 'never listed');
  await fs.symlink('../index.html', path.join(root, 'c/alias.html'));
  await fs.writeFile(path.join(outside, 'secret.txt'), 's');
  await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'c/leak.txt'));
  const whole = await walk(root, { dotfiles: false });
  /** @type {string[][]} */
  const folders = [];
  const byFolder = await walk(root, { dotfiles: false, onFolder: (files) => folders.push(files.map((f) => f.rel)) });
  expect(byFolder.files).toEqual([]);
  expect(folders.map((rels) => [...rels].sort())).toEqual(folders);
  const dirs = folders.map((rels) => rels.map((r) => path.posix.dirname(r)));
  for (const d of dirs) expect(new Set(d).size).toBeLessThanOrEqual(1);
  expect(new Set(dirs.flatMap((d) => d.slice(0, 1))).size).toBe(dirs.filter((d) => d.length > 0).length);
  expect(folders.flat().sort()).toEqual(whole.files.map((f) => f.rel));
  expect(whole.files.map((f) => f.rel)).toEqual(['a/deep/x.css', 'a/y.js', 'a/z.js', 'b.txt', 'c/alias.html', 'c/w.svg', 'index.html']);
  expect(whole.files.find((f) => f.rel === 'c/alias.html')).toMatchObject({ link: true, size: 1 });
  expect({ ...byFolder, files: [] }).toEqual({ ...whole, files: [] });
  expect(whole.outside).toEqual(['c/leak.txt']);
  expect(whole.temps.sort()).toEqual(['.x.pctmp', 'a/.d.pctmp']);
});

test('files of the user\'s and copies of our variants in several folders: each folder decided, warnings in path order', async () => {
  const y = textOf(3000, 2);
  await writeTree(root, {
    'b/x.txt': textOf(3000, 1), 'b/x.txt.gz': 'my own file, not gzip', 'a/y.txt': y, 'c/z.txt': textOf(3000, 3),
    'd/v.txt': textOf(3000, 4), 'd/v.txt.br': 'mine too',
  });
  await fs.writeFile(path.join(root, 'a/y.txt.br'), zlib.brotliCompressSync(y)); // a copy of our variant: adopted
  const r = await precompress(root);
  expect(r.failures).toEqual([]);
  expect(r.warnings.map((w) => w.path)).toEqual(['b/x.txt.gz', 'd/v.txt.br']);
  const m = await manifestOf();
  expect(Object.keys(m.files)).toEqual(['a/y.txt', 'b/x.txt', 'b/x.txt.gz', 'c/z.txt', 'd/v.txt', 'd/v.txt.br']);
  expect(Object.keys(m.files['a/y.txt'].variants)).toEqual(['br', 'gzip']);
  expect(Object.keys(m.files['b/x.txt'].variants)).toEqual(['br']);
  expect(Object.keys(m.files['d/v.txt'].variants)).toEqual(['gzip']);
  expect(await fs.readFile(path.join(root, 'b/x.txt.gz'), 'utf8')).toBe('my own file, not gzip');
  expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, 'a/y.txt.br'))).toString()).toBe(y);
});

test('a warm re-run with nothing changed returns the manifest on disk as its own', async () => {
  await writeTree(root, { 'index.html': textOf(3000), 'a/b.js': textOf(3000, 2), 'a/c.png': 'png' });
  await precompress(root);
  const onDisk = await manifestOf();
  const { manifest, report } = await pass(root, {}, new Set());
  expect(report.changes).toEqual([]);
  expect(manifest).toEqual(onDisk);
});
