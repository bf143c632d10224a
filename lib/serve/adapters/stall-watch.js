/**
 * Closing the connections of `precompressor serve` that make no progress for `--timeout`, within
 * one tick (half a second at most) after it. node:http's own socket timeout (`server.timeout`) gives a
 * download whose client stopped reading a second full period: at the first expiry it finds that
 * the kernel took some bytes since the last write (libuv's write queue shrank), takes that for
 * progress and re-arms (net.Socket's `_onTimeout`), so stalled downloads were held about twice the
 * timeout (#27 item 11). Here each connection is sampled every tick instead, and one whose sample
 * has not changed for `timeout` is reset when bytes wait to be sent (a plain close would leave the
 * client, which reads nothing, never told, and the kernel holding them behind the FIN), else closed
 * as node:http's timer closes it. The watch is the only idle timer: `server.timeout` would re-arm
 * one on every request and write (0.5-1.3 µs a request under load, docs/benchmarks.md).
 */

/**
 * @typedef {{ read: number, written: number, queued: number }} Sample bytes read, bytes written,
 *   and bytes still waiting for the kernel to take them: any change is progress
 */

/**
 * Milliseconds between samples: a quarter of the timeout, at most half a second (the other half of
 * the second promised is left to a busy event loop).
 * @param {number} timeout
 */
export function tickOf(timeout) {
  return Math.min(500, Math.max(10, Math.floor(timeout / 4)));
}

/**
 * What a new sample says of a connection (pure): 'progress' when it moved since `was` (taken at
 * `since`), 'stalled' when it has not for `timeout` ms at `at`, else 'quiet'.
 * @param {Sample} was
 * @param {Sample} now
 * @param {number} since
 * @param {number} at
 * @param {number} timeout
 * @returns {'progress' | 'quiet' | 'stalled'}
 */
export function judge(was, now, since, at, timeout) {
  if (was.read !== now.read || was.written !== now.written || was.queued !== now.queued) return 'progress';
  return at - since >= timeout ? 'stalled' : 'quiet';
}

/** @param {import('node:net').Socket} socket @returns {Sample} */
function sampleOf(socket) {
  // libuv's write queue, which node's own timer reads too: no public API tells it
  const inner = /** @type {{ _handle?: { writeQueueSize?: number } | null }} */ (/** @type {unknown} */ (socket));
  const handle = inner._handle;
  return { read: socket.bytesRead, written: socket.bytesWritten, queued: handle?.writeQueueSize ?? 0 };
}

export class StallWatch {
  /** @type {Map<import('node:net').Socket, { sample: Sample, since: number }>} */
  #sockets = new Map();
  #timeout;
  #timer;

  /**
   * @param {import('node:http').Server} server
   * @param {number} timeout ms (> 0)
   */
  constructor(server, timeout) {
    this.#timeout = timeout;
    server.on('connection', (/** @type {import('node:net').Socket} */ socket) => {
      this.#sockets.set(socket, { sample: sampleOf(socket), since: performance.now() });
      socket.once('close', () => this.#sockets.delete(socket));
    });
    this.#timer = setInterval(() => this.#sweep(performance.now()), tickOf(timeout));
    this.#timer.unref();
  }

  /** @param {number} at */
  #sweep(at) {
    for (const [socket, s] of this.#sockets) {
      if (socket.destroyed) continue;
      const now = sampleOf(socket);
      const verdict = judge(s.sample, now, s.since, at, this.#timeout);
      if (verdict === 'progress') {
        s.sample = now;
        s.since = at;
      } else if (verdict === 'stalled') {
        this.#sockets.delete(socket);
        if (now.queued === 0) socket.destroy();
        else socket.resetAndDestroy();
      }
    }
  }

  close() {
    clearInterval(this.#timer);
  }
}
