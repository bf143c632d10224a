import { poolShares } from '../../lib/compress/pass/cache-first.js';

// When the main thread, taking small files from the cache, is slow for the files left, the pool
// shares them (lib/compress/pass/cache-first.js); the behaviour through real runs is in cache.test.js.

test('the pool shares the files left only once the pace is measured and they would take long here', () => {
  // 0.1 ms of CPU a file (an ordinary disk): 552 files left are 55 ms, less than starting workers.
  expect(poolShares({ left: 552, tried: 16, spentMs: 1.6 })).toBe(false);
  // 1 ms a file (creating files right after many were deleted, on an ext4 without a journal): shared.
  expect(poolShares({ left: 552, tried: 16, spentMs: 16 })).toBe(true);
  // Too few files measured to trust the pace, or too few left for it to matter.
  expect(poolShares({ left: 552, tried: 3, spentMs: 30 })).toBe(false);
  expect(poolShares({ left: 100, tried: 500, spentMs: 500 })).toBe(false);
});
