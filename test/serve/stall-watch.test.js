import { judge, tickOf } from '../../lib/serve/adapters/stall-watch.js';

const at = (read, written, queued) => ({ read, written, queued });

test('judge: any count that moved is progress; the same sample for the whole timeout is a stall', () => {
  const was = at(100, 5_000, 40_000);
  expect(judge(was, at(101, 5_000, 40_000), 0, 10_000, 1_000)).toBe('progress');
  expect(judge(was, at(100, 5_001, 40_000), 0, 10_000, 1_000)).toBe('progress');
  // the kernel took bytes of a write under way: progress, though no write completed
  expect(judge(was, at(100, 5_000, 39_000), 0, 10_000, 1_000)).toBe('progress');
  expect(judge(was, was, 0, 999, 1_000)).toBe('quiet');
  expect(judge(was, was, 0, 1_000, 1_000)).toBe('stalled');
});

test('tickOf: a quarter of the timeout, at most half a second', () => {
  expect(tickOf(30_000)).toBe(500);
  expect(tickOf(1_000)).toBe(250);
  expect(tickOf(1)).toBe(10);
});
