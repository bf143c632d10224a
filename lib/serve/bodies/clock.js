/**
 * The one eviction policy of the serving side, CLOCK (least recently used, approximately), shared
 * by the bodies held in memory (body-cache.js) and the entries kept built (entries.js). Its owner
 * sets an item's `used` flag on a hit, all a hit costs; the hand, looking for an item to evict,
 * clears the flags it passes and takes the first item without one. So an item used again within a
 * turn of the hand stays, however many items used once (a crawler's scan) come and go meanwhile.
 * The ring is a circular list through the items themselves: a new item goes just behind the hand
 * (judged after a whole turn), and an item forgotten for another reason leaves at once.
 */

/**
 * @typedef {{ used: boolean, prev: Ringed | null, next: Ringed | null }} Ringed an item: `used` since
 *   the hand last passed it; `prev`/`next` its neighbours in the ring, null when out of it
 */

/** @template {Ringed} T */
export class Clock {
  /** @type {T | null} the next item judged */
  hand = null;
  size = 0;

  /**
   * Put `item` in the ring, not used yet, just behind the hand. An item already in it stays as it is.
   * @param {T} item
   */
  add(item) {
    if (item.next !== null) return;
    item.used = false;
    const hand = this.hand;
    if (hand === null) {
      item.prev = item;
      item.next = item;
      this.hand = item;
    } else {
      const last = /** @type {Ringed} */ (hand.prev);
      last.next = item;
      item.prev = last;
      item.next = hand;
      hand.prev = item;
    }
    this.size++;
  }

  /**
   * Take `item` out of the ring (nothing when it is not in it).
   * @param {T} item
   */
  remove(item) {
    const { prev, next } = item;
    if (prev === null || next === null) return;
    if (next === item) {
      this.hand = null;
    } else {
      prev.next = next;
      next.prev = prev;
      if (this.hand === item) this.hand = /** @type {T} */ (next);
    }
    item.prev = null;
    item.next = null;
    this.size--;
  }

  /**
   * Take out and return the item the hand stops at: the first one not used since the hand last
   * passed. The ring must not be empty.
   * @returns {T}
   */
  evict() {
    let item = /** @type {T} */ (this.hand);
    while (item.used) {
      item.used = false;
      item = /** @type {T} */ (item.next);
    }
    this.hand = item;
    this.remove(item);
    return item;
  }

  /** Empty the ring; returns what it held, from the hand on. */
  clear() {
    /** @type {T[]} */
    const items = [];
    const first = this.hand;
    for (let item = first; item !== null;) {
      const next = item.next === first ? null : /** @type {T} */ (item.next);
      item.prev = null;
      item.next = null;
      items.push(item);
      item = next;
    }
    this.hand = null;
    this.size = 0;
    return items;
  }
}
