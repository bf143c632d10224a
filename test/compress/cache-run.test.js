import { sizeStep } from '../../lib/compress/cache/upkeep.js';

// How a run learns the variant cache's size (pure): a scan (a stat per entry) or the estimate.

const CAP = 1000;

test('a run whose additions keep the recorded size under the cap adds them instead of scanning', () => {
  expect(sizeStep({ bytes: 400, runsSinceScan: 3 }, 100, CAP, true)).toEqual({ scan: false, bytes: 500, runsSinceScan: 4 });
});

test('a run that may scan scans when the estimate is over the cap, unknown, or 20 runs old', () => {
  expect(sizeStep({ bytes: 950, runsSinceScan: 3 }, 100, CAP, true)).toEqual({ scan: true });
  expect(sizeStep(null, 100, CAP, true)).toEqual({ scan: true });
  expect(sizeStep({ bytes: 10, runsSinceScan: 20 }, 1, CAP, true)).toEqual({ scan: true });
});

test('a run that added nothing to a cache of unknown size does not scan', () => {
  expect(sizeStep(null, 0, CAP, true)).toEqual({ scan: false, bytes: undefined, runsSinceScan: 1 });
  expect(sizeStep({ bytes: 10, runsSinceScan: 25 }, 0, CAP, true)).toEqual({ scan: false, bytes: 10, runsSinceScan: 26 });
});

test('a watch batch never scans: it records its estimate, over the cap or old, for the next whole pass', () => {
  expect(sizeStep({ bytes: 950, runsSinceScan: 3 }, 100, CAP, false)).toEqual({ scan: false, bytes: 1050, runsSinceScan: 4 });
  expect(sizeStep({ bytes: 10, runsSinceScan: 20 }, 1, CAP, false)).toEqual({ scan: false, bytes: 11, runsSinceScan: 21 });
  expect(sizeStep(null, 100, CAP, false)).toEqual({ scan: false, bytes: undefined, runsSinceScan: 1 });
  // and the next run that may scan does
  expect(sizeStep({ bytes: 1050, runsSinceScan: 4 }, 0, CAP, true)).toEqual({ scan: true });
  expect(sizeStep({ bytes: 11, runsSinceScan: 21 }, 5, CAP, true)).toEqual({ scan: true });
});
