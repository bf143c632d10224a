/**
 * Reading a manifest in the layout writeManifest() gives it (lib/manifest.js manifestText()):
 * the head, a line ` "files": {`, one line per file entry, ` }`, `}`. Each entry is parsed on its
 * own and handed on, so that neither the whole text nor a second copy of every entry is held. Any
 * other layout (a manifest written by hand or by an older version: JSON all the same) makes
 * `push()`/`end()` return false, and the caller parses the whole document instead. Pure: text
 * in, parsed values out.
 */

const FILES_LINE = ' "files": {';
const BATCH = 2000;

export class ManifestLines {
  /** @type {'head' | 'files' | 'tail' | 'done'} */
  state = 'head';
  rest = '';
  /** @type {string[]} */
  head = [];
  /** null before the first entry; then whether the last entry line ended with a comma (another must follow) */
  /** @type {boolean | null} */
  more = null;
  /** @type {string[]} entry lines not parsed yet (without their commas) */
  batch = [];

  /**
   * @param {(head: Record<string, unknown>) => void} onHead the top-level fields (`files` empty), before any entry
   * @param {(rel: string, entry: unknown) => void} onEntry each file entry, in the order of the text
   */
  constructor(onHead, onEntry) {
    this.onHead = onHead;
    this.onEntry = onEntry;
  }

  /**
   * Take the next piece of text. False when the text is not in this layout.
   * @param {string} text
   */
  push(text) {
    const all = this.rest + text;
    let from = 0;
    for (let nl = all.indexOf('\n'); nl !== -1; nl = all.indexOf('\n', from)) {
      if (!this.line(all.slice(from, nl))) return false;
      from = nl + 1;
    }
    this.rest = all.slice(from);
    return true;
  }

  /** The text has ended: true when it was a whole document in this layout. */
  end() {
    return this.rest.trim() === '' && this.state === 'done';
  }

  /**
   * @param {string} line
   * @returns {boolean}
   */
  line(line) {
    if (this.state === 'files') return this.entry(line);
    if (this.state === 'head') {
      if (line !== FILES_LINE) {
        this.head.push(line);
        return this.head.length < 10_000; // a head that long is not ours
      }
      const head = parse(`${this.head.join('\n')}\n"files": {}}`);
      if (head === undefined || head === null || typeof head !== 'object' || Array.isArray(head)) return false;
      this.head = [];
      this.state = 'files';
      this.onHead(/** @type {Record<string, unknown>} */ (head));
      return true;
    }
    if (this.state === 'tail' && line === '}') {
      this.state = 'done';
      return true;
    }
    return this.state === 'done' && line.trim() === '';
  }

  /**
   * One line of the files object: an entry, or its closing brace. Entries are parsed in batches
   * (one JSON.parse per BATCH lines is much cheaper than one per line).
   * @param {string} line
   */
  entry(line) {
    if (line === ' }') {
      this.state = 'tail';
      return this.more !== true && this.flush();
    }
    if (!line.startsWith('  "') || this.more === false) return false;
    this.more = line.endsWith(',');
    this.batch.push(this.more ? line.slice(0, -1) : line);
    return this.batch.length < BATCH || this.flush();
  }

  /** Parse the lines gathered and hand on their entries. */
  flush() {
    if (this.batch.length === 0) return true;
    const some = parse(`{${this.batch.join(',')}}`);
    this.batch = [];
    if (some === undefined || some === null || typeof some !== 'object') return false;
    for (const rel in some) this.onEntry(rel, /** @type {Record<string, unknown>} */ (some)[rel]);
    return true;
  }
}

/**
 * JSON.parse, undefined when the text is not JSON.
 * @param {string} text
 */
function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
