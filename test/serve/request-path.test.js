import { parseRequestPath, folderRedirectLocation } from '../../lib/serve/http/request-path.js';

const ok = (url) => {
  const r = parseRequestPath(url);
  if (!r.ok) throw new Error(`${url} rejected: ${r.reason}`);
  return r;
};

describe('parseRequestPath', () => {
  test.each([
    ['/', '', true],
    ['/index.html', 'index.html', false],
    ['/a/b.js?x=1#h', 'a/b.js', false],
    ['/docs/', 'docs', true],
    ['/docs/release%20notes.txt', 'docs/release notes.txt', false],
    ['/caf%C3%A9/men%C3%BC.html', 'café/menü.html', false],
    ['/a%2525b', 'a%25b', false], // decoded exactly once
    ['/a+b', 'a+b', false],
    ['http://example.com/a/b', 'a/b', false],
    ['http://example.com', '', true],
  ])('%s → %s', (url, rel, slash) => {
    const r = ok(url);
    expect(r.rel).toBe(rel);
    expect(r.slash).toBe(slash);
  });

  test.each([
    ['/%', 400], ['/%zz', 400], ['/%E0%A4%A', 400],
    ['/%C0%AE%C0%AE/etc/passwd', 400], // overlong "."
    ['/%C0%AF', 400], ['/%ED%A0%80', 400], // overlong "/", lone surrogate
    ['/a%00.js', 400], ['/a\0.js', 400],
    ['/a%2Fb', 400], ['/a%2fb', 400], ['/a%5Cb', 400], ['/a\\b', 400], ['/..%5C..%5Cetc', 400],
    ['/../etc/passwd', 403], ['/a/../../x', 403], ['/%2e%2e/x', 403], ['/%2E%2E/x', 403], ['/.%2e/x', 403],
    ['/a/./b', 400], ['/%2e/b', 400], ['//etc/passwd', 400], ['/a//b', 400],
    ['*', 400], ['', 400], ['javascript:alert(1)', 400],
  ])('%j rejected with %i', (url, status) => {
    const r = parseRequestPath(url);
    expect(r.ok).toBe(false);
    expect(/** @type {any} */ (r).status).toBe(status);
  });

  test('dotfile flag on any segment, after decoding', () => {
    expect(ok('/.env').dotfile).toBe(true);
    expect(ok('/%2Eenv').dotfile).toBe(true);
    expect(ok('/.well-known/security.txt').dotfile).toBe(true);
    expect(ok('/a/.git/config').dotfile).toBe(true);
    expect(ok('/a/b.c').dotfile).toBe(false);
  });

  test('a path taken as it is (no escape, no empty or dot segment) gives what its escaped spelling gives', () => {
    for (const [plain, escaped] of [
      ['/a/b.js', '/a/b%2Ejs'], ['/docs/', '/d%6Fcs/'], ['/a-b/c~d/e+f', '/a-b/c%7Ed/e+f'],
      ['/a?x=%2F', '/%61?x'], ['/a#/../b', '/%61#x'], ['http://h/a/b/', 'http://h/%61/b/'],
    ]) {
      expect(parseRequestPath(plain)).toEqual(parseRequestPath(escaped));
    }
  });

  test('Windows-only rejections', () => {
    expect(parseRequestPath('/file.txt::$DATA', { windows: true }).ok).toBe(false);
    expect(parseRequestPath('/file.txt.', { windows: true }).ok).toBe(false);
    expect(parseRequestPath('/file.txt%20', { windows: true }).ok).toBe(false);
    expect(parseRequestPath('/file.txt::$DATA', { windows: false }).ok).toBe(true);
  });
});

describe('folderRedirectLocation', () => {
  test.each([
    ['/docs', '/docs/'],
    ['/docs?x=1', '/docs/?x=1'],
    ['/static/docs', '/static/docs/'],
    ['//evil.example/docs', '/evil.example/docs/'],
    ['/\\evil.example', '/%5Cevil.example/'],
    ['///evil.example/docs?q', '/evil.example/docs/?q'],
    ['http://evil.example/docs', '/docs/'],
    ['/caf\u00e9', '/caf%C3%A9/'],
    ['/\u2603', '/%E2%98%83/'],
    ['/caf%C3%A9?x=%20&y', '/caf%C3%A9/?x=%20&y'],
    ['/a b<">', '/a%20b%3C%22%3E/'],
    ['/a\r\nSet-Cookie:x', '/a%0D%0ASet-Cookie:x/'],
  ])('%j → %j', (url, location) => {
    expect(folderRedirectLocation(url)).toBe(location);
  });
});
