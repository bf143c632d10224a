/** @typedef {import('./unsettled.js').FileEvent} FileEvent */

/**
 * The events of the next batch, debounced: each path with its last event; `onDue` is called once
 * `debounce` ms have passed without another event.
 */
export class EventQueue {
  /** @type {Map<string, FileEvent>} path → last event */ #pending = new Map();
  /** @type {NodeJS.Timeout | null} */ #timer = null;
  #debounce;
  #onDue;

  /**
   * @param {number} debounce ms
   * @param {() => void} onDue
   */
  constructor(debounce, onDue) {
    this.#debounce = debounce;
    this.#onDue = onDue;
  }

  get size() {
    return this.#pending.size;
  }

  /** Is a batch waiting for its quiet time to end? */
  get waiting() {
    return this.#timer !== null;
  }

  /**
   * @param {FileEvent} event
   * @param {string} rel
   */
  add(event, rel) {
    this.#pending.set(rel, event);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#onDue();
    }, this.#debounce);
  }

  /** The pending events, in arrival order, now removed from the queue. */
  take() {
    const events = [...this.#pending].map(([p, event]) => ({ event, path: p }));
    this.#pending.clear();
    return events;
  }

  /**
   * Drop the pending events `drop` returns true for.
   * @param {(rel: string, event: FileEvent) => boolean} drop
   */
  drop(drop) {
    for (const [rel, event] of this.#pending) if (drop(rel, event)) this.#pending.delete(rel);
  }

  /** No batch is due any more. */
  close() {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
