/**
 * The connections of `precompressor serve`: the cap, and how many requests one may have waiting.
 * - At `maxConnections`, a new connection closes the one idle longest that has no complete request
 *   (it sent none yet, is still sending its head, or is kept alive between requests); it is closed
 *   itself only when every other one is answering a request. So idle sockets, however many one
 *   client opens, cannot lock the others out (#27 item 8); node:http's own `maxConnections` closes
 *   every newcomer instead.
 * - A connection with more than MAX_PIPELINED requests waiting for their answers is closed: node:http
 *   emits every request a client pipelines, and each costs about 1 KB however small (#27 item 1).
 */

/** Requests one connection may have waiting for their answers (browsers do not pipeline at all). */
export const MAX_PIPELINED = 32;

/** @typedef {import('node:net').Socket} Socket */

export class Connections {
  /** @type {Map<Socket, true>} sockets with no request being answered, the one idle longest first */
  #idle = new Map();
  /** @type {Map<Socket, number>} sockets answering requests, with how many are waiting */
  #busy = new Map();
  #max;
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
    this.#idle.set(socket, true);
    socket.once('close', () => {
      this.#idle.delete(socket);
      this.#busy.delete(socket);
    });
    while (this.#idle.size + this.#busy.size > this.#max) {
      // the newcomer is last: it is taken only when no other socket is idle
      const oldest = /** @type {Socket} */ (this.#idle.keys().next().value);
      this.#idle.delete(oldest);
      oldest.destroy();
    }
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
    const waiting = (this.#busy.get(socket) ?? 0) + 1;
    if (waiting > MAX_PIPELINED) {
      // reset: a client that reads nothing is told, and the kernel drops what it still holds for it
      socket.resetAndDestroy();
      return false;
    }
    this.#busy.set(socket, waiting);
    this.#idle.delete(socket);
    // 'close' is emitted once; res.req.socket is still the request's socket then
    res.on('close', this.#onClose);
    return true;
  }

  /** @param {Socket} socket */
  #answered(socket) {
    const waiting = (this.#busy.get(socket) ?? 1) - 1;
    if (waiting > 0 && !socket.destroyed) return void this.#busy.set(socket, waiting);
    this.#busy.delete(socket);
    if (!socket.destroyed) this.#idle.set(socket, true);
  }
}
