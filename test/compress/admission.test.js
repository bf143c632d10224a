import { Admission } from '../../lib/compress/pass/admission.js';

// Files waiting to be compressed (lib/compress/pass/admission.js): most expensive first, at most
// `limit` under way, and drain() once everything added has ended.

/** An Admission whose items end when the test says so. */
function harness(limit) {
  const started = [];
  const running = new Map();
  const a = new Admission(limit, (item, done) => {
    started.push(item);
    running.set(item, done);
  });
  const end = (item) => {
    const done = running.get(item);
    running.delete(item);
    done();
  };
  return { a, started, running, end };
}

test('starts the most expensive first, at most `limit` at a time, the next as one ends', () => {
  const { a, started, running, end } = harness(2);
  a.add('small', 1);
  a.add('big', 100);
  a.add('medium', 10);
  a.add('tiny', 0);
  a.admit();
  expect(started).toEqual(['big', 'medium']);
  expect(running.size).toBe(2);
  end('medium');
  expect(started).toEqual(['big', 'medium', 'small']);
  end('big');
  end('small');
  expect(started).toEqual(['big', 'medium', 'small', 'tiny']);
  expect(a.idle).toBe(false);
  end('tiny');
  expect(a.idle).toBe(true);
});

test('drain() resolves once everything added has ended, including items added while it waits', async () => {
  const { a, end } = harness(1);
  await a.drain(); // nothing added: at once
  a.add('one', 1);
  a.admit();
  let drained = false;
  const d = a.drain().then(() => { drained = true; });
  a.add('two', 5); // added after the first admit(): starts next, whatever its cost
  end('one');
  await Promise.resolve();
  expect(drained).toBe(false);
  end('two');
  await d;
  expect(drained).toBe(true);
});
