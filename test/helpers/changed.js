import fssync from 'node:fs';

/**
 * Resolves once a watcher on `dir` sees an event on `name`, a turn of the loop later: our own
 * fs.watch shares libuv's inotify queue with the server's, so the server has seen it too.
 * @param {string} dir
 * @param {string} name
 */
export function changed(dir, name) {
  return new Promise((resolve) => {
    const w = fssync.watch(dir, (_e, f) => {
      if (String(f) === name) {
        w.close();
        setImmediate(resolve);
      }
    });
  });
}
