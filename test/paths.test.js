import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { relInside, cacheRoot, absPath, isInside, hasDotSegment } from '../lib/paths.js';

test.each([
  ['/site', '/site/a/b.js', 'a/b.js'],
  ['/site', '/site/..hidden.js', '..hidden.js'],
  ['/site', '/site', null],
  ['/site', '/site-secret/x', null],
  ['/site', '/x', null],
  ['/site/', '/site/m.json', 'm.json'],
])('relInside(%s, %s) → %s', (root, abs, rel) => {
  expect(relInside(root, abs)).toBe(rel);
});

test.each([
  ['/site', '/site', true],
  ['/site', '/site/a', true],
  ['/site', '/site/..a', true],
  ['/site', '/site-x/a', false],
  ['/site', '/sit', false],
  ['/', '/etc', true],
  [null, '/site', false],
])('isInside(%s, %s) → %s', (root, p, inside) => {
  expect(isInside(root, p)).toBe(inside);
});

test('absPath: a site path under its root', () => {
  expect(absPath('/site', 'a/b/c.js')).toBe(path.join('/site', 'a', 'b', 'c.js'));
  expect(absPath('/site', '..foo.js')).toBe(path.join('/site', '..foo.js'));
});

test.each([
  ['.env', true], ['a/.git/config', true], ['a/.b', true], ['..foo.js', true],
  ['a.b/c', false], ['a/b.', false], ['index.html', false],
])('hasDotSegment(%s) → %s', (rel, dot) => {
  expect(hasDotSegment(rel)).toBe(dot);
});

test('isTempPath: temp files, temp folders and what is inside them', async () => {
  const { isTempPath } = await import('../lib/fs-atomic.js');
  expect(isTempPath('.a.js.br.1-ab.pctmp')).toBe(true);
  expect(isTempPath('.precompressor-1-ab.pctmp/w2/3f9a')).toBe(true);
  expect(isTempPath('/site/.precompressor-1-ab.pctmp\\w2\\3f9a')).toBe(true);
  expect(isTempPath('assets/app.js')).toBe(false);
  expect(isTempPath('pctmp/readme.txt')).toBe(false);
});

describe('cacheRoot (find-cache-dir style)', () => {
  const saved = { CACHE_DIR: process.env.CACHE_DIR, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test('CACHE_DIR wins; else node_modules/.cache of the nearest package.json upward; else the OS cache folder', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-cacheroot-'));
    try {
      const project = path.join(tmp, 'app');
      fs.mkdirSync(path.join(project, 'src', 'deep'), { recursive: true });
      fs.writeFileSync(path.join(project, 'package.json'), '{}');
      process.env.CACHE_DIR = path.join(tmp, 'ci-cache');
      expect(cacheRoot(project)).toBe(path.join(tmp, 'ci-cache', 'precompressor'));
      delete process.env.CACHE_DIR;
      expect(cacheRoot(path.join(project, 'src', 'deep'))).toBe(path.join(project, 'node_modules', '.cache', 'precompressor'));
      process.env.XDG_CACHE_HOME = path.join(tmp, 'xdg');
      // (no package.json from the temp folder upward, as in the tests' own working directory)
      if (process.platform === 'linux') expect(cacheRoot(path.join(tmp, 'loose'))).toBe(path.join(tmp, 'xdg', 'precompressor'));
      expect(fs.existsSync(path.join(project, 'node_modules'))).toBe(false); // nothing created
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
