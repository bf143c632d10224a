// A manifest in writeManifest()'s layout parsed a piece at a time, never the whole text held; another
// layout makes push()/end() return false (the caller then parses the whole document).

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
    // JSON strings hold no raw line feed: a cut inside a nested value leaves `{piece}` unbalanced.
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
