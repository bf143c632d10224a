import { MAX_ENTRIES } from './entries.js';

/**
 * The representations repeated requests were answered with from memory, by (request target,
 * Accept-Encoding), so that the next such request is one Map lookup (lib/serve/core/hot.js says which
 * requests may use it). Valid while nothing the answer came from has moved: the same manifest, no
 * entry forgotten, marked stale or evicted since (`Entries.changes`), and the body still held.
 */

/**
 * Request targets kept before the memo is cleared (bounds memory under hostile input): as many as the
 * entries kept built, so that a site those fit in stays remembered whole.
 */
export const HOT_LIMIT = MAX_ENTRIES;

/** Accept-Encoding absent: a key no header value can be. */
const NO_HEADER = '\0';

/** One remembered answer; `other`: the same target asked with another Accept-Encoding. */
class Hot {
  /**
   * @param {string} ae
   * @param {import('./table.js').Entry} entry
   * @param {import('./table.js').Rep} rep
   * @param {string[]} head what it was sent with (its site dictionary Link, if any, added)
   * @param {Hot | null} other
   */
  constructor(ae, entry, rep, head, other) {
    this.ae = ae;
    this.entry = entry;
    this.rep = rep;
    this.head = head;
    this.other = other;
  }
}

export class HotReps {
  /** @type {Map<string, Hot>} */
  #map = new Map();
  /** @type {object | null} the entries (one manifest's) the answers came from */
  #entries = null;
  #changes = -1;

  /**
   * The answer remembered for (url, ae), its body still held; null when there is none.
   * @param {{ changes: number }} entries the site's entries now
   * @param {string} url
   * @param {string | undefined} ae
   */
  get(entries, url, ae) {
    if (entries !== this.#entries || entries.changes !== this.#changes) return null;
    const key = ae ?? NO_HEADER;
    for (let h = this.#map.get(url) ?? null; h !== null; h = h.other) {
      if (h.ae !== key) continue;
      const { rep, entry } = h;
      if (rep.body === null) return null;
      // what the slow path's lookup and send would mark: both stay recently used
      entry.used = true;
      rep.used = true;
      return h;
    }
    return null;
  }

  /**
   * Remember that (url, ae) is answered with `head` and the body of `rep` of `entry` (held).
   * @param {{ changes: number }} entries the entries `entry` is kept by now
   * @param {string} url
   * @param {string | undefined} ae
   * @param {import('./table.js').Entry} entry
   * @param {import('./table.js').Rep} rep
   * @param {string[]} head
   */
  set(entries, url, ae, entry, rep, head) {
    if (entries !== this.#entries || entries.changes !== this.#changes || this.#map.size >= HOT_LIMIT) {
      this.#map.clear();
      this.#entries = entries;
      this.#changes = entries.changes;
    }
    const key = ae ?? NO_HEADER;
    let first = this.#map.get(url) ?? null;
    // a target's answers for other headers stay, one per header value (at most a handful in practice)
    for (let h = first, n = 0; h !== null; h = h.other, n++) {
      if (h.ae === key || n >= 8) {
        first = null;
        break;
      }
    }
    this.#map.set(url, new Hot(key, entry, rep, head, first));
  }

  /** Number of request targets remembered (tests, diagnostics). */
  get size() {
    return this.#map.size;
  }
}
