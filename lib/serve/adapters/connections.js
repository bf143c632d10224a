/**
 * The connections of `precompressor serve`: the cap, and how many requests one may have waiting.
 * - At `maxConnections`, a new connection closes the one idle longest that has no complete request
 *   (it sent none yet, is still sending its head, or is kept alive between requests); it is closed
 *   itself only when every other one is answering a request. So idle sockets, however many one
 *   client opens, cannot lock the others out (#27 item 8); node:http's own `maxConnections` closes
 *   every newcomer instead.
 * - A connection with more than MAX_PIPELINED requests waiting for their answers is closed: node:http
 *   emits every request a client pipelines, and each costs about 1 KB however small (#27 item 1).
 * A request only counts on its connection's record: a Map's set and delete per request would
 * churn its table in old space, a full GC every few seconds under load (docs/benchmarks.md).
 */

/** Requests one connection may have waiting for their answers (browsers do not pipeline at all). */
export const MAX_PIPELINED = 32;

/** @typedef {import('node:net').Socket} Socket */

/** One open connection: requests waiting for their answers, and when it last became idle. */
class Conn {
  waiting = 0;

  /** @param {number} idleSince */
  constructor(idleSince) {
    this.idleSince = idleSince;
  }
}

export class Connections {
  /** @type {Map<Socket, Conn>} the open connections, set and deleted once each */
  #conns = new Map();
  #max;
  /** counts the moments connections become idle: the smallest stamp is the one idle longest */
  #stamp = 0;
  /** @type {(this: import('node:http').ServerResponse) => void} every response's 'close': no closure per request */
  #onClose;

  /**
   * @param {import('node:http').Server} server
   * @param {number} max connections open at once
   */
  constructor(server, max) {
    this.#max = max;
    const connections = this;
    this.#onClose = function () {
      connections.#answered(this.req.socket);
    };
    // a backstop only: the newcomer is counted before one is closed to make room
    server.maxConnections = max + 1;
    server.on('connection', (/** @type {Socket} */ socket) => this.#connected(socket));
  }

  /** @param {Socket} socket */
  #connected(socket) {
    this.#conns.set(socket, new Conn(++this.#stamp));
    socket.once('close', () => this.#conns.delete(socket));
    while (this.#conns.size > this.#max) {
      // the newcomer is idle with the newest stamp: it is taken only when no other socket is idle
      const oldest = /** @type {Socket} */ (this.#idleLongest());
      this.#conns.delete(oldest);
      oldest.destroy();
    }
  }

  /** The idle connection with the oldest stamp (a scan: only a newcomer at the cap asks). */
  #idleLongest() {
    let found = null;
    let since = Infinity;
    for (const [socket, c] of this.#conns) {
      if (c.waiting === 0 && c.idleSince < since) {
        found = socket;
        since = c.idleSince;
      }
    }
    return found;
  }

  /**
   * A request whose head has arrived: false (and the connection closed) when its socket already
   * has MAX_PIPELINED requests waiting, else it is counted until its response closes.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  admit(req, res) {
    const socket = req.socket;
    if (socket.destroyed) return false;
    const c = this.#conns.get(socket);
    if (c === undefined) return true; // not seen connecting (a socket handed over by hand): not counted
    if (c.waiting >= MAX_PIPELINED) {
      // reset: a client that reads nothing is told, and the kernel drops what it still holds for it
      socket.resetAndDestroy();
      return false;
    }
    c.waiting++;
    // 'close' is emitted once; res.req.socket is still the request's socket then
    res.on('close', this.#onClose);
    return true;
  }

  /** @param {Socket} socket */
  #answered(socket) {
    const c = this.#conns.get(socket);
    if (c === undefined || c.waiting === 0) return;
    if (--c.waiting === 0) c.idleSince = ++this.#stamp;
  }
}
