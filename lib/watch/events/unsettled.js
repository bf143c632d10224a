import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { absPath } from '../../paths.js';

/** @typedef {'add' | 'change' | 'unlink' | 'unlinkDir'} FileEvent */

/**
 * Watch mode's files whose writes have not settled: their first event, the size and mtime last
 * seen and when they last changed. A file whose size and mtime stay the same for `waitMs` has
 * settled and goes to `onSettled`; every pass leaves the others as they were (its `holdOut`).
 */
export class UnsettledFiles {
  /** @type {Map<string, { event: FileEvent, size: number, mtimeMs: number, since: number }>} */
  files = new Map();
  /** @type {NodeJS.Timeout | null} polls the files while there are any */
  #poller = null;
  #polling = false;
  #closed = false;

  /**
   * @param {string} root
   * @param {number} waitMs
   * @param {(event: FileEvent, rel: string) => void} onSettled
   */
  constructor(root, waitMs, onSettled) {
    this.root = root;
    this.waitMs = waitMs;
    this.onSettled = onSettled;
  }

  /** @param {string} rel */
  has(rel) {
    return this.files.has(rel);
  }

  /** @param {string} rel */
  delete(rel) {
    this.files.delete(rel);
  }

  /**
   * `rel` was written: unsettled from now on (its first event is kept: an 'add' stays an 'add').
   * @param {FileEvent} event
   * @param {string} rel
   */
  touch(event, rel) {
    const u = this.files.get(rel);
    if (u) u.since = performance.now();
    else this.files.set(rel, { event, size: -1, mtimeMs: -1, since: performance.now() });
    this.#poller ??= setInterval(() => this.#poll(), Math.max(10, Math.min(50, this.waitMs / 4)));
  }

  /**
   * Stat the files: one whose size and mtime have stayed the same for `waitMs` has settled. One
   * that cannot be stat'ed settles at once: its pass sees what is there (nothing, after a delete,
   * whose own event follows).
   */
  async #poll() {
    if (this.#polling) return;
    this.#polling = true;
    try {
      await Promise.all([...this.files].map(async ([rel, u]) => {
        const st = await fs.promises.stat(absPath(this.root, rel)).catch(() => null);
        if (this.#closed || this.files.get(rel) !== u) return; // deleted (or deleted and re-added) meanwhile
        const now = performance.now();
        if (st && (st.size !== u.size || st.mtimeMs !== u.mtimeMs)) {
          Object.assign(u, { size: st.size, mtimeMs: st.mtimeMs, since: now });
        } else if (!st || now - u.since >= this.waitMs) {
          this.files.delete(rel);
          this.onSettled(u.event, rel);
        }
      }));
    } finally {
      this.#polling = false;
      if (this.files.size === 0) this.#stop();
    }
  }

  #stop() {
    if (this.#poller) clearInterval(this.#poller);
    this.#poller = null;
  }

  close() {
    this.#closed = true;
    this.#stop();
  }
}
