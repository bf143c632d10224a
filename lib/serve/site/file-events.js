import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../../paths.js';
import { statIfThere } from '../../fs-atomic.js';
import { suffixEncoding, stemOf } from '../../encodings.js';
import { deltaStem } from '../../manifest/manifest.js';

/**
 * The middleware's watchers, one `fs.watch` per folder of served files and the manifest's, set up
 * synchronously; events are hints. A folder replaced by a rename (dev/ino) drops its watchers and
 * reloads; `covers()` tells the folders watched now, the only ones trusted between events.
 *
 * @param {{
 *   manifest: string | null,
 *   onManifest: () => void,
 *   onFile: (absPath: string) => void,
 *   onFailure?: (dir: string, err: Error) => void,
 * }} handlers
 */
export function createWatcher({ manifest, onManifest, onFile, onFailure = () => {} }) {
  /** @type {Map<string, { w: fs.FSWatcher, dev: number, ino: number }>} the folder each watcher was set on */
  const watchers = new Map();
  const manifestDir = manifest === null ? null : path.dirname(manifest);
  const manifestName = manifest === null ? null : path.basename(manifest);
  let stopAwaiting = () => {}; // waiting for the manifest's folder to come back
  let closed = false;

  /** @param {string} dir */
  function watch(dir) {
    if (closed || watchers.has(dir)) return;
    /** @type {fs.FSWatcher} */
    let w;
    let st;
    try {
      st = fs.statSync(dir); // before the watch: a folder swapped in between is the one watched, and found unlike
      w = fs.watch(dir, { persistent: false }, (event, filename) => {
        // the platform did not say which file: treat every file of this folder as changed
        if (filename === null || filename === undefined) return onFile(path.join(dir, '*'));
        const name = String(filename);
        if (name === path.basename(dir)) checkSelf(dir, w); // the folder itself moved (or a file of its name)
        if (dir === manifestDir && name === manifestName) onManifest();
        onFile(path.join(dir, name));
      });
    } catch (err) {
      // gone or not watchable: the next reload tries again, but none comes for a manifest folder gone
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      const back = () => [watch(dir), onManifest()];
      if (code !== 'ENOENT' && code !== 'ENOTDIR') onFailure(dir, /** @type {Error} */ (err));
      else if (dir === manifestDir && code === 'ENOENT') stopAwaiting = awaitFolder(dir, stopAwaiting, back);
      return;
    }
    // not watched from now on: nothing of it is trusted from memory
    w.on('error', (/** @type {Error} */ err) => [drop(dir, w), onFile(path.join(dir, '*')), onFailure(dir, err)]);
    watchers.set(dir, { w, dev: st.dev, ino: st.ino });
  }

  /** Is `w` still on `dir`? Else drop it and those below, reload. @param {string} dir @param {fs.FSWatcher} w */
  function checkSelf(dir, w) {
    // synchronously: bodies of the old folder must not be sent a moment longer than needed
    const now = statIfThere(dir);
    const was = watchers.get(dir);
    if (closed || was?.w !== w || (now !== undefined && now.dev === was.dev && now.ino === was.ino)) return;
    for (const [d, x] of [...watchers]) {
      if (!isInside(dir, d)) continue;
      drop(d, x.w);
      onFile(path.join(d, '*')); // its bodies are not sent again, even if the reload fails (folder gone)
    }
    // the manifest's folder at once (the new one, or awaited): a reload that finds no manifest watches nothing
    if (manifestDir !== null && isInside(dir, manifestDir)) watch(manifestDir);
    onManifest();
  }

  /** @param {string} dir @param {fs.FSWatcher} w */
  function drop(dir, w) {
    w.close();
    if (watchers.get(dir)?.w === w) watchers.delete(dir);
  }

  /** Watch exactly these folders (absolute paths) plus the manifest's folder. @param {Iterable<string>} dirs */
  function update(dirs) {
    const want = new Set(dirs);
    if (manifestDir !== null) want.add(manifestDir);
    for (const [dir, { w }] of watchers) if (!want.has(dir)) drop(dir, w);
    for (const dir of want) watch(dir);
  }

  function close() {
    closed = true;
    stopAwaiting();
    for (const { w } of watchers.values()) w.close();
    watchers.clear();
  }

  // covers: is the folder `dir` (absolute) watched now?
  return { update, close, covers: (/** @type {string} */ dir) => watchers.has(dir), size: () => watchers.size };
}

/**
 * Watch the parent of the missing folder `dir` until a folder of that name is there, then call `back` once.
 * @param {string} dir
 * @param {() => void} previous
 * @param {() => unknown} back
 * @returns {() => void} stops waiting
 */
function awaitFolder(dir, previous, back) {
  previous();
  /** @type {fs.FSWatcher | null} */
  let w = null;
  let done = false;
  const stop = () => {
    done = true;
    w?.close();
  };
  const check = () => {
    if (done || !fs.existsSync(dir)) return;
    stop();
    back();
  };
  try {
    w = fs.watch(path.dirname(dir), { persistent: false }, (_event, name) => {
      if (name === null || name === undefined || String(name) === path.basename(dir)) check();
    });
    w.on('error', stop);
  } catch {
    return stop;
  }
  queueMicrotask(check); // made before this watch began
  return stop;
}

/**
 * The listed paths an event on `rel` may have made stale (pure); `dir/*`: a file the platform did not name.
 * @param {string} rel
 * @returns {string[] | string} the paths, or the folder ('' the root)
 */
export function pathsTouchedBy(rel) {
  if (rel === '*' || rel.endsWith('/*')) return rel.slice(0, -2);
  const out = [rel];
  const enc = suffixEncoding(rel);
  if (enc) out.push(stemOf(rel, enc));
  const stem = deltaStem(rel);
  if (stem !== null) out.push(stem);
  return out;
}
