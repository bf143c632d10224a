import fs from 'node:fs';
import { watch as chokidarWatch } from 'chokidar';
import { TreeWatcher } from './tree-watch.js';
import { PrecompressorError } from '../../errors.js';
import { isTempPath } from '../../fs-atomic.js';
import { MANIFEST_INDEX_SUFFIX } from '../../options.js';
import { relInside, hasDotSegment } from '../../paths.js';

/** Event intake: the folder's watcher, the paths it ignores, the events a batch is made of. */

/** @typedef {import('./unsettled.js').FileEvent} FileEvent the chokidar events a batch is made of */

/**
 * A new folder's files arrive as their own `add` events, once written: `addDir` starts nothing.
 * @param {string} event
 * @returns {event is FileEvent}
 */
export const isFileEvent = (event) =>
  event === 'add' || event === 'change' || event === 'unlink' || event === 'unlinkDir';

/**
 * Rejects with ERR_PRECOMPRESSOR_DIR unless `root` is a folder.
 * @param {string} root
 */
export async function mustBeDirectory(root) {
  const st = await fs.promises.stat(root).catch(() => null);
  if (!st?.isDirectory()) {
    const why = st ? 'is not a directory' : 'does not exist';
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Directory ${root} ${why}`, { path: root });
  }
}

/**
 * The paths no event is wanted for (pure): our temp files, the manifest and its index, dot paths without dotfiles.
 * @param {string} root
 * @param {string | null} manifestRel
 * @param {boolean} dotfiles
 * @returns {(abs: string) => boolean}
 */
export function ignoredBy(root, manifestRel, dotfiles) {
  return (abs) => {
    const rel = relInside(root, abs);
    if (rel === null) return false;
    // the manifest's warm index too (lib/compress/pass/warm-index.js), written beside it by precompress()
    return isTempPath(rel) || rel === manifestRel || rel === `${manifestRel}${MANIFEST_INDEX_SUFFIX}` ||
      (!dotfiles && hasDotSegment(rel));
  };
}

/**
 * Native events: one watcher per folder (tree-watch.js); polling: chokidar's stat polling.
 * @param {string} root
 * @param {boolean} usePolling
 * @param {(abs: string) => boolean} ignored
 * @returns {import('chokidar').FSWatcher | TreeWatcher}
 */
export function openTreeWatcher(root, usePolling, ignored) {
  if (!usePolling) return new TreeWatcher(root, ignored);
  // Not chokidar's awaitWriteFinish: a pass must know which files are still unsettled.
  return chokidarWatch(root, {
    ignoreInitial: true, followSymlinks: false, usePolling: true, awaitWriteFinish: false, ignored,
  });
}
