/**
 * Files waiting to be compressed, started most expensive first and at most `limit` at a time: a
 * file under way holds its promises, closures and task objects, and on a tree of 10^5 files
 * starting them all at once held hundreds of MB. Pure: `start(item, done)` does the work.
 * @template T
 */
export class Admission {
  /** @type {{ item: T, cost: number }[]} not started yet, taken from the end once ordered */
  waiting = [];
  /** the waiting list is put in order once, at the first admit(): items added later go next */
  ordered = false;
  /** started and not done */
  active = 0;
  /** @type {(() => void) | null} resolves drain() */
  onIdle = null;

  /**
   * @param {number} limit
   * @param {(item: T, done: () => void) => void} start `done` once the item has ended, whatever the outcome
   */
  constructor(limit, start) {
    this.limit = limit;
    this.start = start;
  }

  /**
   * @param {T} item
   * @param {number} cost
   */
  add(item, cost) {
    this.waiting.push({ item, cost });
  }

  /** Start waiting items, most expensive first, while fewer than `limit` are under way. */
  admit() {
    if (!this.ordered) {
      this.waiting.sort((a, b) => a.cost - b.cost);
      this.ordered = true;
    }
    while (this.waiting.length > 0 && this.active < this.limit) {
      const { item } = /** @type {{ item: T }} */ (this.waiting.pop());
      this.active++;
      this.start(item, () => {
        this.active--;
        this.admit();
        if (this.idle) this.onIdle?.();
      });
    }
  }

  get idle() {
    return this.active === 0 && this.waiting.length === 0;
  }

  /** Resolves once every item added has ended, including those added meanwhile. */
  drain() {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => {
      this.onIdle = () => {
        this.onIdle = null;
        resolve(undefined);
      };
    });
  }
}
