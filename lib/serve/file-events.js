import fs from 'node:fs';
import path from 'node:path';

/**
 * File-system watchers for the middleware: one non-recursive `fs.watch` per folder that holds a
 * served file, plus the manifest's folder. Watchers are not persistent (they never keep the
 * process alive) and are set up synchronously, so a change made after `serveStatic()` returns is
 * reported. Events are only hints: the middleware re-checks the disk before trusting anything.
 *
 * @param {{
 *   manifest: string | null,
 *   onManifest: () => void,
 *   onFile: (absPath: string) => void,
 * }} handlers
 */
export function createWatcher({ manifest, onManifest, onFile }) {
  /** @type {Map<string, fs.FSWatcher>} */
  const watchers = new Map();
  const manifestDir = manifest === null ? null : path.dirname(manifest);
  const manifestName = manifest === null ? null : path.basename(manifest);
  let closed = false;

  /** @param {string} dir */
  function watch(dir) {
    if (closed || watchers.has(dir)) return;
    let w;
    try {
      w = fs.watch(dir, { persistent: false }, (event, filename) => {
        if (filename === null || filename === undefined) {
          // the platform did not say which file: treat every file of this folder as changed
          onFile(path.join(dir, '*'));
          return;
        }
        const name = String(filename);
        if (dir === manifestDir && name === manifestName) onManifest();
        onFile(path.join(dir, name));
      });
    } catch {
      return; // folder gone or not watchable: the next reload tries again
    }
    w.on('error', () => {
      w.close();
      if (watchers.get(dir) === w) watchers.delete(dir);
    });
    watchers.set(dir, w);
  }

  /**
   * Watch exactly these folders (absolute paths) plus the manifest's folder.
   * @param {Iterable<string>} dirs
   */
  function update(dirs) {
    const want = new Set(dirs);
    if (manifestDir !== null) want.add(manifestDir);
    for (const [dir, w] of watchers) {
      if (!want.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    for (const dir of want) watch(dir);
  }

  function close() {
    closed = true;
    for (const w of watchers.values()) w.close();
    watchers.clear();
  }

  return { update, close, size: () => watchers.size };
}
