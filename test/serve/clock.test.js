import { Clock } from '../../lib/serve/bodies/clock.js';

// The one eviction policy of the serving side (CLOCK), shared by the body cache and the entries.

const item = (name) => ({ name, used: false, prev: null, next: null });

/** The items from the hand on, once round, each linked both ways to its neighbours. */
function ringOf(c) {
  const out = [];
  for (let it = c.hand; it !== null && (out.length === 0 || it !== c.hand); it = it.next) {
    expect(it.next.prev).toBe(it);
    out.push(it);
  }
  expect(out.length).toBe(c.size);
  return out;
}

test('the hand takes items in the order they came when none was used again', () => {
  const c = new Clock();
  const items = ['a', 'b', 'c', 'd'].map(item);
  items.forEach((it) => c.add(it));
  expect(items.map(() => c.evict().name)).toEqual(['a', 'b', 'c', 'd']);
  expect([c.size, c.hand]).toEqual([0, null]);
  expect(items.every((it) => it.next === null && it.prev === null)).toBe(true);
});

test('an item used since the hand passed stays for another turn; its flag is cleared on the way', () => {
  const c = new Clock();
  const [a, b, d] = ['a', 'b', 'd'].map(item);
  [a, b, d].forEach((it) => c.add(it));
  a.used = true;
  expect(c.evict()).toBe(b);
  expect(a.used).toBe(false);
  expect(c.evict()).toBe(d);
  expect(c.evict()).toBe(a);
});

test('a new item goes just behind the hand: every item already there is judged before it', () => {
  const c = new Clock();
  const old = Array.from({ length: 5 }, (_, i) => item(`o${i}`));
  old.forEach((it) => c.add(it));
  old[0].used = true;
  old[1].used = true;
  expect(c.evict().name).toBe('o2'); // the hand is now within the ring, past o0 and o1
  c.add(item('new'));
  expect(ringOf(c).map((it) => it.name)).toEqual(['o3', 'o4', 'o0', 'o1', 'new']);
  expect(Array.from({ length: 5 }, () => c.evict().name)).toEqual(['o3', 'o4', 'o0', 'o1', 'new']);
});

test('an item used on every turn outlives a scan of items used once, many times the ring', () => {
  const c = new Clock();
  const hot = item('hot');
  c.add(hot);
  for (let i = 0; i < 10_000; i++) {
    if (c.size >= 64) expect(c.evict()).not.toBe(hot);
    c.add(item(`cold${i}`));
    if (i % 50 === 0) hot.used = true;
  }
  expect(ringOf(c)).toContain(hot);
  expect(c.size).toBe(64);
});

test('an item removed leaves at once, wherever the hand is; clear() empties the ring', () => {
  const c = new Clock();
  const items = Array.from({ length: 20 }, (_, i) => item(`i${i}`));
  items.forEach((it) => c.add(it));
  c.remove(items[0]); // the hand's own item: the hand moves on
  for (const i of [19, 7, 7]) c.remove(items[i]);
  expect(c.hand).toBe(items[1]);
  expect(ringOf(c).map((it) => it.name)).toEqual(items.filter((_, i) => ![0, 7, 19].includes(i)).map((it) => it.name));
  const out = Array.from({ length: 17 }, () => c.evict());
  expect(out).toEqual(items.filter((_, i) => ![0, 7, 19].includes(i)));
  c.add(items[0]);
  c.add(items[0]); // already in: stays once
  c.add(items[1]);
  expect(c.size).toBe(2);
  expect(c.clear()).toEqual([items[0], items[1]]);
  expect([c.size, c.hand, items[0].next, items[1].prev]).toEqual([0, null, null, null]);
});
