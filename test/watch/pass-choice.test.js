import { wholePassReason, batchOutcome, eventDistrust, WHY, MANY_EVENTS } from '../../lib/watch/passes/pass-choice.js';

// When a batch becomes a whole pass (docs/watch.md, "Batches and whole passes"): pure decisions.

const trusted = { initial: false, distrust: null, hasRecords: true, eventCount: 1 };

test('a batch of a few events, with the manifest in memory and on disk the same, is a batch', () => {
  expect(wholePassReason(trusted)).toBeNull();
  expect(wholePassReason({ ...trusted, eventCount: MANY_EVENTS - 1, manifestCurrent: true })).toBeNull();
});

test('the first pass is a whole pass', () => {
  expect(wholePassReason({ ...trusted, initial: true })).toBe(WHY.first);
});

test('a folder removed, renamed away or replaced makes the next pass whole; other events do not', () => {
  expect(eventDistrust('unlinkDir')).toBe(WHY.folderGone);
  expect(['add', 'change', 'unlink', 'addDir'].map(eventDistrust)).toEqual([null, null, null, null]);
  expect(wholePassReason({ ...trusted, distrust: eventDistrust('unlinkDir') })).toBe(WHY.folderGone);
});

test('an error of the watcher makes the next pass whole', () => {
  expect(wholePassReason({ ...trusted, distrust: WHY.watcherError })).toBe(WHY.watcherError);
});

test(`${MANY_EVENTS} events or more make a whole pass`, () => {
  expect(wholePassReason({ ...trusted, eventCount: MANY_EVENTS })).toBe(WHY.manyEvents);
  expect(wholePassReason({ ...trusted, eventCount: 100_000 })).toBe(WHY.manyEvents);
});

test('the manifest written by another process makes a whole pass', () => {
  expect(wholePassReason({ ...trusted, manifestCurrent: false })).toBe(WHY.manifestNotOurs);
});

test('without a manifest in memory (the last whole pass failed) a whole pass runs', () => {
  expect(wholePassReason({ ...trusted, hasRecords: false })).toBe(WHY.noRecords);
});

test('a batch that touches the site dictionary gives way to a whole pass now', () => {
  expect(batchOutcome(null)).toEqual({ now: WHY.siteDictionary, next: null });
});

test('a batch that says so (the site dictionary changed, its manifest not written) makes the next pass whole', () => {
  expect(batchOutcome({ whole: true })).toEqual({ now: null, next: WHY.batchSaysSo });
  expect(batchOutcome({ whole: false })).toEqual({ now: null, next: null });
});

test('the first reason wins over the later checks', () => {
  const s = { initial: true, distrust: WHY.watcherError, hasRecords: false, eventCount: MANY_EVENTS, manifestCurrent: false };
  expect(wholePassReason(s)).toBe(WHY.first);
  expect(wholePassReason({ ...s, initial: false })).toBe(WHY.watcherError);
});
