import path from 'node:path';
import { normalizeOptions, parseSize, commaList } from '../lib/options.js';

describe('normalizeOptions', () => {
  test('defaults are filled and frozen', () => {
    const o = normalizeOptions('dist');
    expect(o.encodings).toEqual(['br', 'gzip']);
    expect(o.brotliQuality).toBe(11);
    expect(o.gzipLevel).toBe(9);
    expect(o.concurrency).toBeGreaterThanOrEqual(1);
    expect(o.manifest.endsWith('dist/precompressor-manifest.json')).toBe(true);
    expect(Object.isFrozen(o)).toBe(true);
  });
  test('a list option given as a string is read like the CLI reads its flag: trimmed, empty items dropped', () => {
    expect(commaList(' br, gzip,,zstd ')).toEqual(['br', 'gzip', 'zstd']);
    const o = normalizeOptions('dist', { skipExtensions: 'png, .JPG', deltaExtensions: 'js, css' });
    expect([...o.skipExtensions]).toEqual(['png', 'jpg']);
    expect([...o.deltaExtensions]).toEqual(['js', 'css']);
  });
  test.each([
    [{ concurrency: 'abc' }, 'Expected options.concurrency to be a positive integer, got "abc" (string)'],
    [{ concurrency: 0 }, 'Expected options.concurrency to be a positive integer, got 0 (number)'],
    [{ brotliQuality: 12 }, 'Expected options.brotliQuality to be an integer from 0 to 11, got 12 (number)'],
    [{ gzipLevel: 0 }, 'Expected options.gzipLevel to be an integer from 1 to 9, got 0 (number)'],
    [{ minRatio: 0 }, 'Expected options.minRatio to be a number greater than 0 and at most 1, got 0 (number)'],
    [{ encodings: ['lzma'] }, /^Expected options\.encodings to be a list of br, .*gzip.*, got \["lzma"\] \(array\)$/],
    [{ include: [3] }, 'Expected options.include to be a string or an array of non-empty strings, got [3] (array)'],
    [{ dotfiles: 'yes' }, 'Expected options.dotfiles to be a boolean, got "yes" (string)'],
    [{ deltas: 'on' }, 'Expected options.deltas to be a boolean, got "on" (string)'],
    [{ previous: '' }, 'Expected options.previous to be a non-empty path string, got "" (string)'],
    [{ dictionaryStore: 3 }, 'Expected options.dictionaryStore to be a non-empty path string, got 3 (number)'],
    [{ dictionaryVersions: 0 }, 'Expected options.dictionaryVersions to be an integer from 1 to 100, got 0 (number)'],
    [{ deltaMinSize: -1 }, 'Expected options.deltaMinSize to be a non-negative integer (bytes), got -1 (number)'],
    [{ deltaMargin: 1 }, 'Expected options.deltaMargin to be a number from 0 to less than 1, got 1 (number)'],
    [{ deltaExtensions: [''] }, 'Expected options.deltaExtensions to be a string or an array of non-empty strings, got [""] (array)'],
    [{ hashPattern: /-([a-z]{8})\./ }, 'Expected options.hashPattern to be a RegExp (or its source) with a named group (?<hash>...), or a function, got an object'],
    [{ cache: 'no' }, 'Expected options.cache to be a boolean, got "no" (string)'],
    [{ cacheDir: '' }, 'Expected options.cacheDir to be a non-empty path string, got "" (string)'],
    [{ cacheMaxSize: '12 parsecs' }, 'Expected options.cacheMaxSize to be a size in bytes (a non-negative integer, or a string such as "512MB"), got "12 parsecs" (string)'],
    [{ cacheMaxSize: -1 }, 'Expected options.cacheMaxSize to be a size in bytes (a non-negative integer, or a string such as "512MB"), got -1 (number)'],
    [{ hashPattern: '(?<hash>[' }, 'Expected options.hashPattern to be a valid regular expression, got "(?<hash>[" (string)'],
  ])('%j is rejected with a clear message', (opts, message) => {
    expect(() => normalizeOptions('dist', opts)).toThrow(message);
    try {
      normalizeOptions('dist', opts);
    } catch (err) {
      expect(err.code).toBe('ERR_PRECOMPRESSOR_OPTION');
    }
  });
  test('deploy-delta options: defaults, paths resolved, hashPattern from a string', () => {
    const o = normalizeOptions('dist');
    expect(o).toMatchObject({ deltas: true, previous: null, dictionaryVersions: 3, deltaMinSize: 1024, deltaMargin: 0.1, hashPattern: null });
    // (the test setup points CACHE_DIR at a temp folder: see test/helpers/isolate-cwd.js)
    expect(o.dictionaryStore).toBe(path.join(/** @type {string} */ (process.env.CACHE_DIR), 'precompressor', 'dictionaries'));
    expect(o).toMatchObject({ cache: true, cacheDir: path.join(/** @type {string} */ (process.env.CACHE_DIR), 'precompressor', 'variants'), cacheMaxSize: 512 * 1024 * 1024 });
    expect([...o.deltaExtensions]).toEqual(['js', 'mjs', 'cjs', 'css', 'wasm', 'json', 'html', 'htm']);
    const p = normalizeOptions('dist', { previous: 'old', dictionaryStore: '/tmp/s', deltaExtensions: '.JS,css', hashPattern: '_(?<hash>[a-z]{6})\\.js$' });
    expect(p).toMatchObject({ previous: path.resolve('old'), dictionaryStore: '/tmp/s' });
    expect([...p.deltaExtensions]).toEqual(['js', 'css']);
    expect(p.hashPattern).toBeInstanceOf(RegExp);
    expect(p.hashPattern.exec('app_abcdef.js')?.groups?.hash).toBe('abcdef');
  });
  test('unknown options are named', () => {
    expect(() => normalizeOptions('dist', { concurency: 2 })).toThrow(/options\.concurency/);
  });
  test('dir must be a string', () => {
    expect(() => normalizeOptions(undefined)).toThrow('Expected dir to be a non-empty string, got undefined (undefined)');
  });
});

test.each([
  [1000, 1000], ['1000', 1000], ['512MB', 512e6], ['512 MiB', 512 * 1024 ** 2], ['1.5GiB', 1.5 * 1024 ** 3], ['2kb', 2000],
  ['', null], ['-5', null], ['5 parsecs', null], [1.5, null], [null, null],
])('parseSize(%j) → %j', (v, bytes) => {
  expect(parseSize(v)).toBe(bytes);
});
