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
