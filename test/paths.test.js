import { relInside } from '../lib/paths.js';

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

test('isTempPath: temp files, temp folders and what is inside them', async () => {
  const { isTempPath } = await import('../lib/fs-atomic.js');
  expect(isTempPath('.a.js.br.1-ab.pctmp')).toBe(true);
  expect(isTempPath('.precompressor-1-ab.pctmp/w2/3f9a')).toBe(true);
  expect(isTempPath('/site/.precompressor-1-ab.pctmp\\w2\\3f9a')).toBe(true);
  expect(isTempPath('assets/app.js')).toBe(false);
  expect(isTempPath('pctmp/readme.txt')).toBe(false);
});
