/**
 * node:http emits every request a client pipelines at once, but a pipelined response has no socket
 * until the responses before it have finished: `res.socket` is null, and the response emits
 * 'socket' when its turn comes. Work that opens a file or buffers bytes waits for that turn, so
 * one connection holds one file and one response's buffers however much it pipelines (#27).
 */

/**
 * Run `go(arg)` now, or once `res` owns its connection when it is a node:http response queued
 * behind another one on the same socket. Anything else (a response that has its socket, a response
 * without one that no socket is serving: a test double, a finished response) runs at once.
 * @template T
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {(arg: T) => void} go
 * @param {T} [arg] what `go` is called with (no closure per request when it runs at once)
 */
export function whenSending(req, res, go, arg) {
  const a = /** @type {T} */ (arg);
  if (!waitsForTurn(req, res)) return go(a);
  res.once('socket', () => go(a));
}

/**
 * A response queued behind another on its request's socket (node:http's own record of the
 * response a socket is sending, `_httpMessage`; without it, not queued).
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
export function waitsForTurn(req, res) {
  if (res.socket || res.writableEnded || res.destroyed) return false;
  const sending = /** @type {{ _httpMessage?: unknown } | null | undefined} */ (req.socket)?._httpMessage;
  return sending !== undefined && sending !== null && sending !== res && !req.socket.destroyed;
}
