// Two small control-flow primitives shared by the compressor, the server and watch mode.

/**
 * One run of `fn` at a time. A call while it runs gets one more run after it, shared by every
 * call made meanwhile: a burst of requests costs at most the run in flight and one more.
 * @template T
 * @param {() => Promise<T>} fn
 */
export function singleFlight(fn) {
  /** @type {Promise<T> | null} */
  let current = null;
  /** @type {Promise<T> | null} */
  let queued = null;
  /** @returns {Promise<T>} */
  function run() {
    if (queued) return queued;
    if (current) {
      queued = current.catch(() => {}).then(() => {
        queued = null;
        return run();
      });
      return queued;
    }
    current = fn().finally(() => {
      current = null;
    });
    return current;
  }
  /** Resolves (never rejects) once the run in flight and the one queued behind it have ended. */
  const idle = () => Promise.resolve(queued ?? current).then(() => {}, () => {});
  return { run, idle };
}

/**
 * Did this error come from a file that changed while it was read (`changed: true`)?
 * @param {unknown} err
 */
export function isChanged(err) {
  return typeof err === 'object' && err !== null && /** @type {{ changed?: unknown }} */ (err).changed === true;
}

/**
 * `fn(attempt)` again while it fails because its file changed under it (see isChanged()), at most
 * `attempts` times in all; any other error, or the last one, is thrown.
 * @template T
 * @param {(attempt: number) => Promise<T>} fn
 * @param {number} attempts
 * @returns {Promise<T>}
 */
export async function retryWhileChanged(fn, attempts) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!isChanged(err) || attempt >= attempts) throw err;
    }
  }
}
