import { SPLIT_SHARE_MIN, SPLIT_THRESHOLD, entryFrom, joinResults, sameSource, splitTasks } from '../../lib/compress/pass/file-tasks.js';

// A file's compression as tasks, and its manifest entry from their results (lib/compress/pass/file-tasks.js).

const stats = (hits, misses) => ({ hits, misses, rejected: 0, written: 0, cpuSavedMs: hits * 10, error: null });
const result = (out, extra = {}) => ({ hash: 'sha256-a', size: 1000, mtimeMs: 5, out, ...extra });

test('a small file is one task for all encodings; a big one a task per encoding', () => {
  expect(splitTasks(SPLIT_THRESHOLD - 1, { encodings: ['br', 'gzip'] })).toEqual([{ encodings: ['br', 'gzip'] }]);
  expect(splitTasks(SPLIT_THRESHOLD, { encodings: ['br', 'gzip'] })).toEqual([{ encodings: ['br'] }, { encodings: ['gzip'] }]);
});

test('the entry lists the variants kept; none kept is "not-smaller"; fromCache only when every task only hit', () => {
  const split = [result({ br: 300 }, { cache: stats(1, 0) }), result({ gzip: null }, { cache: stats(1, 0) })];
  expect(entryFrom(split, ['br', 'gzip'])).toEqual({
    entry: { size: 1000, mtimeMs: 5, hash: 'sha256-a', variants: { br: { size: 300 } } }, fromCache: true,
  });
  expect(entryFrom([result({ br: null, gzip: null }, { cache: stats(1, 1) })], ['br', 'gzip'])).toEqual({
    entry: { size: 1000, mtimeMs: 5, hash: 'sha256-a', variants: {}, skipped: 'not-smaller' }, fromCache: false,
  });
  // an encoding the file no longer gets (a file of the user's at its path) is not listed
  expect(entryFrom([result({ br: 300, gzip: 400 })], ['gzip']).entry.variants).toEqual({ gzip: { size: 400 } });
});

test('joinResults: one result from two tasks of a file; a file that changed between them is retried', () => {
  const here = result({ br: 300 }, { cache: stats(1, 0), missing: ['gzip'] });
  const there = result({ gzip: 400 }, { cache: stats(0, 1) });
  expect(joinResults(here, there)).toEqual({
    hash: 'sha256-a', size: 1000, mtimeMs: 5, out: { br: 300, gzip: 400 },
    cache: { hits: 1, misses: 1, rejected: 0, written: 0, cpuSavedMs: 10, error: null },
  });
  expect(sameSource([here, there])).toBe(true);
  const changed = { ...there, hash: 'sha256-b' };
  expect(sameSource([here, changed])).toBe(false);
  expect(() => joinResults(here, changed)).toThrow(expect.objectContaining({ changed: true }));
});

test('a file that is a core\'s share of the pass is split below the size threshold, a small one never', () => {
  const opts = { encodings: /** @type {const} */ (['br', 'gzip']) };
  expect(splitTasks(SPLIT_SHARE_MIN, opts, 1)).toEqual([{ encodings: ['br'] }, { encodings: ['gzip'] }]);
  expect(splitTasks(SPLIT_SHARE_MIN, opts, 0.99)).toEqual([{ encodings: ['br', 'gzip'] }]);
  expect(splitTasks(SPLIT_SHARE_MIN - 1, opts, 2)).toEqual([{ encodings: ['br', 'gzip'] }]);
});
