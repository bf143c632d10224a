import path from 'node:path';
import { normalizeServeOptions, parseDuration, SERVE_DEFAULTS } from '../../lib/serve/http/options.js';

describe('parseDuration (as express.static reads maxAge, with ms, capped at one year)', () => {
  const YEAR = 31_536_000_000;
  test.each([
    [0, 0], [1500, 1500], ['100', 100], ['500ms', 500], ['10s', 10_000], ['30m', 1_800_000], ['2h', 7_200_000],
    ['1d', 86_400_000], ['2 days', 172_800_000], ['1w', 604_800_000], ['1y', YEAR], ['1.5h', 5_400_000], ['.5s', 500],
    [Infinity, YEAR], [10 * YEAR, YEAR], [-1, 0], ['-1d', 0], [null, 0], [false, 0],
  ])('%j → %d ms', (v, ms) => expect(parseDuration(v)).toBe(ms));
  test.each([[NaN], ['abc'], ['1 fortnight'], [''], [' 2D '], [{}], [true]])('%j is invalid (express.static would silently use 0)', (v) => {
    expect(parseDuration(v)).toBeNaN();
  });
});

describe('normalizeServeOptions', () => {
  test('defaults', () => {
    const o = normalizeServeOptions('site');
    expect(Object.isFrozen(o)).toBe(true);
    expect(o.root).toBe(path.resolve('site'));
    expect(o.manifest).toBe(path.resolve('site', 'precompressor-manifest.json'));
    expect(o.encodings).toEqual(['br', 'zstd', 'gzip']);
    expect(o.index).toEqual(['index.html']);
    expect(o.cacheControl).toBe('public, max-age=0');
    expect(o).toMatchObject({ dotfiles: 'ignore', etag: true, lastModified: true, acceptRanges: true, fallthrough: true, redirect: true, unlisted: false, spa: null, watch: true });
    expect(o.extensions).toEqual([]);
  });
  test('maxAge, immutable and the one-year cap', () => {
    expect(normalizeServeOptions('s', { maxAge: '1d', immutable: true }).cacheControl).toBe('public, max-age=86400, immutable');
    expect(normalizeServeOptions('s', { maxAge: '5y' }).cacheControl).toBe('public, max-age=31536000');
    expect(normalizeServeOptions('s', { cacheControl: false, maxAge: 1000 }).cacheControl).toBeNull();
  });
  test('manifest: relative to root, absolute, or false (then unlisted)', () => {
    expect(normalizeServeOptions('/srv/site', { manifest: 'm.json' }).manifest).toBe(path.resolve('/srv/site/m.json'));
    expect(normalizeServeOptions('/srv/site', { manifest: '/tmp/m.json' }).manifest).toBe(path.resolve('/tmp/m.json'));
    const o = normalizeServeOptions('/srv/site', { manifest: false });
    expect(o.manifest).toBeNull();
    expect(o.unlisted).toBe(true);
  });
  test('index, extensions, spa', () => {
    const o = normalizeServeOptions('s', { index: 'default.htm', extensions: ['.html', 'htm'], spa: true });
    expect(o.index).toEqual(['default.htm']);
    expect(o.extensions).toEqual(['html', 'htm']);
    expect(o.spa).toBe('index.html');
    expect(normalizeServeOptions('s', { index: false }).index).toEqual([]);
    expect(normalizeServeOptions('s', { spa: 'app/shell.html' }).spa).toBe('app/shell.html');
  });
  test.each([
    [{ dotfiles: 'hide' }, 'Expected options.dotfiles to be "ignore", "deny" or "allow", got "hide" (string)'],
    [{ maxAge: '1 fortnight' }, 'Expected options.maxAge to be a number of milliseconds or a duration string like "1d", got "1 fortnight" (string)'],
    [{ maxage: 'soon' }, 'Expected options.maxage to be a number of milliseconds or a duration string like "1d", got "soon" (string)'],
    [{ etag: 'yes' }, 'Expected options.etag to be a boolean, got "yes" (string)'],
    [{ encodings: ['br', 'deflate'] }, 'Expected options.encodings to be an array of distinct encodings among br, zstd, gzip, got ["br","deflate"] (array)'],
    [{ setHeaders: 1 }, 'Expected options.setHeaders to be a function, got 1 (number)'],
    [{ index: ['../b.html'] }, 'Expected options.index to be a file path or an array of them, or false, got ["../b.html"] (array)'],
    [{ index: ['a//b.html'] }, 'Expected options.index to be a file path or an array of them, or false, got ["a//b.html"] (array)'],
    [{ extensions: ['a/b'] }, 'Expected options.extensions to be a file name or an array of them, or false, got ["a/b"] (array)'],
    [{ spa: '../x.html' }, 'Expected options.spa to be a boolean or a file path relative to root, got "../x.html" (string)'],
    [{ memoryBudget: -1 }, 'Expected options.memoryBudget to be a non-negative integer (bytes), got -1 (number)'],
    [{ dictionaries: 1 }, 'Expected options.dictionaries to be a boolean, got 1 (number)'],
    [{ immutableHashed: 'yes' }, 'Expected options.immutableHashed to be a boolean, got "yes" (string)'],
    [{ manifest: '' }, 'Expected options.manifest to be a non-empty path string or false, got "" (string)'],
    [{ hidden: true }, `Expected options.hidden to be one of the known options (${Object.keys(SERVE_DEFAULTS).join(', ')}), got "hidden" (string)`],
  ])('%j is rejected with the one error template', (options, message) => {
    let err;
    try {
      normalizeServeOptions('s', options);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'ERR_PRECOMPRESSOR_OPTION', message });
  });
  test('root: the TypeErrors of express.static, with our code', () => {
    expect(() => normalizeServeOptions('')).toThrow(TypeError);
    expect(() => normalizeServeOptions('')).toThrow('root path required: Expected root to be a non-empty path string, got "" (string)');
    expect(() => normalizeServeOptions(42)).toThrow('root path must be a string: Expected root to be a non-empty path string, got 42 (number)');
  });
  test('options null is options undefined; maxage is maxAge\'s other spelling', () => {
    expect(normalizeServeOptions('s', null)).toEqual(normalizeServeOptions('s'));
    expect(normalizeServeOptions('s', { maxage: '1h' }).cacheControl).toBe('public, max-age=3600');
    expect(normalizeServeOptions('s', { maxage: '1h', maxAge: '2h' }).cacheControl).toBe('public, max-age=7200');
    expect(normalizeServeOptions('s', { maxAge: Infinity }).cacheControl).toBe('public, max-age=31536000');
  });
});
