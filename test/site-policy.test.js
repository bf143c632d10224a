import { INTERNAL_NAMES, LOOKUP_ORDER, internalKind, isImmutable, isAlwaysInternal } from '../lib/site-policy.js';

// The site policy (lib/site-policy.js): the one answer serveStatic and the generated server
// configurations share for what is internal, what is hashed and which file answers a URL.

describe('what is internal', () => {
  test.each([
    ['precompressor-manifest.json', 'manifest'],
    ['assets/app.js.br', 'variant'],
    ['assets/app.js.gz', 'variant'],
    ['assets/app.js.zst', 'variant'],
    ['assets/app.js.0123456789abcdef.dcb', 'delta'],
    ['index.html.0123456789abcdef.dcz', 'delta'],
    ['a.js.1234.pctmp', 'temp'],
    ['precompressor-manifest.json.pcindex', 'index'],
    ['meta/site.json.pcindex', 'index'],
    ['run.pctmp/a.js', 'temp'],
    ['.env', 'dotfile'],
    ['a/.git/config', 'dotfile'],
  ])('%s is internal (%s)', (rel, kind) => {
    expect(internalKind(rel)).toBe(kind);
  });

  test.each(['index.html', 'assets/app.js', 'a.brx', 'a.js.0123456789abcdeg.dcb', 'precompressor-dictionary.0123456789abcdef.dict', 'sub/precompressor-manifest.json'])(
    '%s is served', (rel) => {
      expect(internalKind(rel)).toBeNull();
    });

  test('a listed file whose name looks like ours is the user\'s and is served; the manifest and temps never', () => {
    expect(internalKind('downloads/data.tar.gz', { listed: true })).toBeNull();
    expect(internalKind('downloads/data.tar.gz')).toBe('variant');
    expect(internalKind('x.pctmp', { listed: true })).toBe('temp');
    expect(internalKind('site.json', { listed: true, manifestRel: 'site.json' })).toBe('manifest');
    expect(internalKind('precompressor-manifest.json', { manifestRel: null })).toBeNull();
    expect(internalKind('.well-known/a', { dotfiles: true })).toBeNull();
    expect(isAlwaysInternal('precompressor-manifest.json', 'precompressor-manifest.json')).toBe(true);
    expect(isAlwaysInternal('a.pctmp', null)).toBe(true);
    expect(isAlwaysInternal('a.gz', null)).toBe(false);
  });

  test('every rule is a regular expression a generator can write as it is (no flags, no lookbehind)', () => {
    for (const r of INTERNAL_NAMES) {
      expect(() => new RegExp(r.source)).not.toThrow();
      expect(r.source).not.toMatch(/\(\?<[=!]/);
    }
  });
});

test('hashed names are immutable: the build records it in the dictionary record', () => {
  expect(isImmutable({ dictionary: { hashed: true } })).toBe(true);
  expect(isImmutable({ dictionary: { hashed: false } })).toBe(false);
  expect(isImmutable({})).toBe(false);
});

test('the lookup order names each step once', () => {
  expect([...LOOKUP_ORDER].sort()).toEqual(['extensions', 'file', 'folder']);
});
