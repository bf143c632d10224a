import { EventQueue } from '../../lib/watch/events/event-queue.js';

test('a path keeps its last event; take() empties the queue in arrival order', () => {
  const q = new EventQueue(60_000, () => {});
  q.add('add', 'a.js');
  q.add('change', 'b.css');
  q.add('unlink', 'a.js');
  expect(q.size).toBe(2);
  expect(q.waiting).toBe(true);
  expect(q.take()).toEqual([{ event: 'unlink', path: 'a.js' }, { event: 'change', path: 'b.css' }]);
  expect(q.size).toBe(0);
  q.close();
  expect(q.waiting).toBe(false);
});

test('drop() removes the events it is asked to', () => {
  const q = new EventQueue(60_000, () => {});
  q.add('add', 'a.js');
  q.add('add', 'a.js.br');
  q.drop((rel) => rel.endsWith('.br'));
  expect(q.take()).toEqual([{ event: 'add', path: 'a.js' }]);
  q.close();
});

test('a burst of events makes one call once the queue is quiet', async () => {
  let calls = 0;
  /** @type {() => void} */
  let due = () => {};
  const once = new Promise((resolve) => {
    due = () => resolve(undefined);
  });
  const q = new EventQueue(0, () => {
    calls++;
    due();
  });
  for (let i = 0; i < 10; i++) q.add('change', `f${i}.js`);
  await once;
  expect(calls).toBe(1);
  expect(q.waiting).toBe(false);
  expect(q.size).toBe(10);
});
