import fs from 'node:fs';
import path from 'node:path';
import { EventEmitter } from 'node:events';
import { PrecompressorError, watchFailureText } from '../../errors.js';

// A whole tree's events with one `fs.watch` per folder, not per file as chokidar (one inotify watch per
// file went over the per-user limit at 100,000 files); chokidar's events, each an lstat of the name given.

/** @typedef {{ watcher: fs.FSWatcher | null, files: Set<string>, dirs: Set<string> }} Folder names seen in a folder */

export class TreeWatcher extends EventEmitter {
  /** @type {Map<string, Folder>} absolute folder path → what it holds */
  #folders = new Map();
  #closed = false;

  /**
   * @param {string} root absolute
   * @param {(abs: string) => boolean} ignored paths never reported nor entered
   */
  constructor(root, ignored) {
    super();
    this.root = root;
    this.ignored = ignored;
    this.#add(root, false).then(() => this.emit('ready'), (err) => this.emit('error', err));
  }

  /**
   * Watch a folder, then list it (a file made in between is seen by one or the other), and its
   * subfolders in turn. `announce`: report its files (a folder made after ready).
   * @param {string} dir
   * @param {boolean} announce
   */
  async #add(dir, announce) {
    if (this.#closed || this.#folders.has(dir) || (dir !== this.root && this.ignored(dir))) return;
    /** @type {Folder} */
    const folder = { watcher: null, files: new Set(), dirs: new Set() };
    this.#folders.set(dir, folder);
    try {
      folder.watcher = fs.watch(dir, (_event, name) =>
        this.#onEvent(dir, name === null || name === undefined ? null : String(name)));
      folder.watcher.on('error', () => this.#gone(dir));
    } catch (err) {
      this.#folders.delete(dir);
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return; // gone already
      // refused (EACCES) or the system's limit (ENOSPC): its changes would be missed, silently
      throw new PrecompressorError('ERR_PRECOMPRESSOR_WATCH', watchFailureText(dir, err), { path: dir, cause: err });
    }
    const entries = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const d of entries) {
      const abs = path.join(dir, d.name);
      if (this.#closed || this.ignored(abs)) continue;
      if (d.isDirectory()) {
        folder.dirs.add(d.name);
        if (announce) this.emit('all', 'addDir', abs);
        await this.#add(abs, announce);
      } else if (!folder.files.has(d.name)) {
        folder.files.add(d.name);
        if (announce) this.emit('all', 'add', abs);
      }
    }
  }

  /**
   * The folder `dir` reported `name` (null: some name it did not give): see what is there now.
   * @param {string} dir
   * @param {string | null} name
   */
  #onEvent(dir, name) {
    const folder = this.#folders.get(dir);
    if (this.#closed || folder === undefined) return;
    if (name === null) {
      // every name it holds now or held before
      fs.promises.readdir(dir).then((names) => {
        for (const n of new Set([...names, ...folder.files, ...folder.dirs])) this.#onEvent(dir, n);
      }, () => this.#gone(dir));
      return;
    }
    const abs = path.join(dir, name);
    if (this.ignored(abs)) return;
    fs.lstat(abs, (err, st) => {
      if (this.#closed || this.#folders.get(dir) !== folder) return;
      if (err) {
        if (folder.files.delete(name)) this.emit('all', 'unlink', abs);
        else if (folder.dirs.delete(name)) this.#gone(abs);
      } else if (st.isDirectory()) {
        if (folder.files.delete(name)) this.emit('all', 'unlink', abs);
        if (!folder.dirs.has(name)) {
          folder.dirs.add(name);
          this.emit('all', 'addDir', abs);
          this.#add(abs, true).catch((e) => this.emit('error', e));
        }
      } else {
        if (folder.dirs.delete(name)) this.#gone(abs); // a folder replaced by a file: its files are gone
        const known = folder.files.has(name);
        folder.files.add(name);
        this.emit('all', known ? 'change' : 'add', abs);
      }
    });
  }

  /**
   * A folder that no longer exists: stop watching it and what was below it, and say so.
   * @param {string} dir
   */
  #gone(dir) {
    const below = dir + path.sep;
    for (const [d, f] of this.#folders) {
      if (d !== dir && !d.startsWith(below)) continue;
      f.watcher?.close();
      this.#folders.delete(d);
    }
    if (dir !== this.root) this.emit('all', 'unlinkDir', dir);
  }

  /** Stop every watcher. */
  async close() {
    this.#closed = true;
    for (const f of this.#folders.values()) f.watcher?.close();
    this.#folders.clear();
  }
}
