/**
 * The connections of `precompressor serve`: how many requests one may have waiting. node:http
 * emits every request a client pipelines, and each costs about 1 KB however small; a connection
 * with more than MAX_PIPELINED requests waiting for their answers is closed (#27 item 1).
 */

/** Requests one connection may have waiting for their answers (browsers do not pipeline at all). */
export const MAX_PIPELINED = 32;

/** @typedef {import('node:net').Socket} Socket */

export class Connections {
  /** @type {Map<Socket, number>} sockets answering requests, with how many are waiting */
  #busy = new Map();

  /** @param {import('node:http').Server} server */
  constructor(server) {
    server.on('connection', (/** @type {Socket} */ socket) => {
      socket.once('close', () => this.#busy.delete(socket));
    });
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
      socket.destroy();
      return false;
    }
    this.#busy.set(socket, waiting);
    res.once('close', () => this.#answered(socket));
    return true;
  }

  /** @param {Socket} socket */
  #answered(socket) {
    const waiting = (this.#busy.get(socket) ?? 1) - 1;
    if (waiting > 0 && !socket.destroyed) this.#busy.set(socket, waiting);
    else this.#busy.delete(socket);
  }
}
