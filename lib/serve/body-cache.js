/**
 * The bodies the server holds in memory, at most `maxBytes` of them: a representation's bytes are
 * added when it is first sent from disk, and the least recently used go first when the cap is
 * reached. Recency is kept the CLOCK way (a hit sets one flag on the representation; the hand
 * passes over flagged ones once before taking them), so a hit costs the request path nothing more
 * than that flag.
 */

/**
 * @typedef {{ body: Buffer | null, used?: boolean, ringed?: boolean }} Holder a representation
 *   whose `body` the cache sets and clears (`used`: sent since the hand last passed; `ringed`: in the ring)
 */

export class BodyCache {
  /** @type {Holder[]} */
  ring = [];
  hand = 0;
  bytes = 0;
  live = 0;

  /** @param {number} maxBytes */
  constructor(maxBytes) {
    this.maxBytes = maxBytes;
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
    while (this.bytes + body.length > this.maxBytes) this.evictOne();
    holder.body = body;
    holder.used = false;
    this.bytes += body.length;
    this.live++;
    if (!holder.ringed) {
      holder.ringed = true;
      this.ring.push(holder);
    }
  }

  /** Drop the body the hand stops at: the first one not used since the hand last passed. */
  evictOne() {
    for (;;) {
      if (this.hand >= this.ring.length) this.hand = 0;
      const h = this.ring[this.hand];
      if (h.body !== null && h.used) {
        h.used = false;
        this.hand++;
        continue;
      }
      this.unring(this.hand);
      if (h.body !== null) {
        this.release(h);
        return;
      }
    }
  }

  /**
   * Take the holder at `i` out of the ring, by moving the last one there (the ring's order is not the order of use).
   * @param {number} i
   */
  unring(i) {
    /** @type {Holder} */ (this.ring[i]).ringed = false;
    this.ring[i] = /** @type {Holder} */ (this.ring.at(-1));
    this.ring.pop();
  }

  /** @param {Holder} h */
  release(h) {
    this.bytes -= /** @type {Buffer} */ (h.body).length;
    this.live--;
    h.body = null;
  }

  /**
   * Forget `holder`'s body (its file changed). Places of forgotten bodies are swept when they
   * outnumber the bodies held.
   * @param {Holder} holder
   */
  drop(holder) {
    if (holder.body === null) return;
    this.release(holder);
    if (this.ring.length > 64 && this.ring.length > 2 * this.live) {
      for (const h of this.ring) if (h.body === null) h.ringed = false;
      this.ring = this.ring.filter((h) => h.body !== null);
      this.hand = 0;
    }
  }

  /** Forget every body (a new manifest). */
  clear() {
    for (const h of this.ring) {
      h.body = null;
      h.ringed = false;
    }
    this.ring = [];
    this.hand = 0;
    this.bytes = 0;
    this.live = 0;
  }
}
