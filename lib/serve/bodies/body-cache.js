import { Clock } from './clock.js';

/**
 * The bodies the server holds in memory, at most `maxBytes` of them: a representation's bytes are
 * added when it is first sent from disk, and the least recently used go first when the cap is
 * reached (clock.js, the policy the entries use too): a hit costs the request path one flag.
 */

/**
 * Bodies up to this size are read whole where a larger one is checked by its stat or streamed: an
 * original at its first check (read and hashed), a range read for a server that drops a stream's length.
 */
export const SMALL_BODY = 64 * 1024;

/**
 * @typedef {import('./clock.js').Ringed & { body: Buffer | null }} Holder a representation whose
 *   `body` the cache sets and clears (`used`, `prev`, `next`: its place in the Clock)
 */

export class BodyCache {
  /** @type {Clock<Holder>} */
  clock = new Clock();
  bytes = 0;

  /** @param {number} maxBytes */
  constructor(maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** Number of bodies held. */
  get live() {
    return this.clock.size;
  }

  /**
   * Would a body of `size` bytes be kept?
   * @param {number} size
   */
  fits(size) {
    return size <= this.maxBytes;
  }

  /**
   * Hold `body` as `holder.body`, making room first.
   * @param {Holder} holder
   * @param {Buffer} body
   */
  add(holder, body) {
    if (!this.fits(body.length) || holder.body !== null) return;
    while (this.bytes + body.length > this.maxBytes) this.release(this.clock.evict());
    holder.body = body;
    this.bytes += body.length;
    this.clock.add(holder);
  }

  /** @param {Holder} h */
  release(h) {
    this.bytes -= /** @type {Buffer} */ (h.body).length;
    h.body = null;
  }

  /**
   * Forget `holder`'s body (its file changed, its entry was forgotten).
   * @param {Holder} holder
   */
  drop(holder) {
    if (holder.body === null) return;
    this.clock.remove(holder);
    this.release(holder);
  }

  /** Forget every body (a new manifest). */
  clear() {
    for (const h of this.clock.clear()) h.body = null;
    this.bytes = 0;
  }
}
