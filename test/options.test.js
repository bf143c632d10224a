import { normalizeOptions } from '../lib/options.js';

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
  test.each([
    [{ concurrency: 'abc' }, 'Expected options.concurrency to be a positive integer, got "abc" (string)'],
    [{ concurrency: 0 }, 'Expected options.concurrency to be a positive integer, got 0 (number)'],
    [{ brotliQuality: 12 }, 'Expected options.brotliQuality to be an integer from 0 to 11, got 12 (number)'],
    [{ gzipLevel: 0 }, 'Expected options.gzipLevel to be an integer from 1 to 9, got 0 (number)'],
    [{ minRatio: 0 }, 'Expected options.minRatio to be a number greater than 0 and at most 1, got 0 (number)'],
    [{ encodings: ['lzma'] }, /^Expected options\.encodings to be a list of br, .*gzip.*, got \["lzma"\] \(array\)$/],
    [{ include: [3] }, 'Expected options.include to be a string or an array of non-empty strings, got [3] (array)'],
    [{ dotfiles: 'yes' }, 'Expected options.dotfiles to be a boolean, got "yes" (string)'],
  ])('%j is rejected with a clear message', (opts, message) => {
    expect(() => normalizeOptions('dist', opts)).toThrow(message);
    try {
      normalizeOptions('dist', opts);
    } catch (err) {
      expect(err.code).toBe('ERR_PRECOMPRESSOR_OPTION');
    }
  });
  test('unknown options are named', () => {
    expect(() => normalizeOptions('dist', { concurency: 2 })).toThrow(/options\.concurency/);
  });
  test('dir must be a string', () => {
    expect(() => normalizeOptions(undefined)).toThrow('Expected dir to be a non-empty string, got undefined (undefined)');
  });
});
