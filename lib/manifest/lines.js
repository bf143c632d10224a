/**
 * Reading a manifest in the layout writeManifest() gives it (lib/manifest/manifest.js manifestText()):
 * the head, a line ` "files": {`, one line per file entry, ` }`, `}`. The entries are parsed a
 * piece of text at a time (each piece cut after a `,` that ends a line) and handed on, so that
 * neither the whole text nor a second copy of every entry is held. A piece that does not parse as
 * members of an object (a layout of another writer: JSON all the same) makes `push()`/`end()`
 * return false, and the caller parses the whole document instead. Pure: text in, values out.
 *
 * Why cutting is safe: JSON text holds no raw line feed inside a string, so `,\n` is always a
 * separator; if it separates two members of the files object, `{piece}` parses as those members,
 * and if it lies inside a nested value, `{piece}` is unbalanced and does not parse.
 */

const FILES_LINE = '\n "files": {\n';
const TAIL = /\n }\n}\s*$/;
/** Longest head looked at before deciding the layout is not ours. */
const MAX_HEAD = 1 << 20;

export class ManifestLines {
  /** @type {'head' | 'files' | 'failed'} */
  state = 'head';
  rest = '';
  /** a `,` was consumed: another member must follow */
  more = false;

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
    if (this.state === 'failed') return false;
    this.rest += text;
    if (this.state === 'head' && !this.head()) return this.fail();
    if (this.state !== 'files') return true;
    const cut = this.rest.lastIndexOf(',\n');
    if (cut === -1) return true;
    const piece = this.rest.slice(0, cut);
    this.rest = this.rest.slice(cut + 2);
    this.more = true;
    return (piece.trim() !== '' && this.members(piece)) || this.fail();
  }

  /** The text has ended: true when it was a whole document in this layout. */
  end() {
    if (this.state !== 'files') return false;
    const m = TAIL.exec(this.rest);
    if (m === null) return this.fail();
    const piece = this.rest.slice(0, m.index);
    this.rest = '';
    if (piece.trim() === '') return !this.more || this.fail();
    return this.members(piece) || this.fail();
  }

  /** The head, once its last line has arrived; false when it is not ours. */
  head() {
    const at = this.rest.indexOf(FILES_LINE);
    if (at === -1) return this.rest.length < MAX_HEAD;
    const head = parse(`${this.rest.slice(0, at)}\n"files": {}}`);
    if (head === undefined || head === null || typeof head !== 'object' || Array.isArray(head)) return false;
    this.rest = this.rest.slice(at + FILES_LINE.length);
    this.state = 'files';
    this.onHead(/** @type {Record<string, unknown>} */ (head));
    return true;
  }

  /**
   * Members of the files object, handed on; false when `piece` is not a list of members.
   * @param {string} piece
   */
  members(piece) {
    const some = parse(`{${piece}}`);
    if (some === undefined || some === null || typeof some !== 'object' || Array.isArray(some)) return false;
    for (const rel in some) this.onEntry(rel, /** @type {Record<string, unknown>} */ (some)[rel]);
    return true;
  }

  /** @returns {false} */
  fail() {
    this.state = 'failed';
    this.rest = '';
    return false;
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
