/**
 * The controls a handler of every adapter carries (serveStatic's, the fetch handler's): one set, so
 * that the adapters cannot drift apart.
 */

/**
 * `handler` with the site's reload(), settled(), close(), size() and memory().
 * @template {Function} H
 * @param {H} handler
 * @param {import('../site/index.js').Site} s
 */
export function withControls(handler, s) {
  return Object.assign(handler, {
    reload: () => s.reload(),
    /** Resolves when pending reloads and first checks of paths have finished. */
    settled: () => s.settled(),
    /** Stop the watchers (they never keep the process alive, but tests and servers close them). */
    close: () => s.close(),
    /** Number of files the manifest lists for serving (for diagnostics and tests). */
    size: () => s.size,
    /** Bodies and bytes held in memory, entries built (for diagnostics, tests and benchmarks). */
    memory: () => s.memory(),
  });
}
