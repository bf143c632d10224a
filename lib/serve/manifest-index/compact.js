import { invalidManifest } from '../../manifest/manifest.js';
import { DELTA_NAMES, ENCODING_NAMES } from '../../encodings.js';

/**
 * A manifest's bytes, a piece at a time, made into writeManifest()'s layout with only what serving
 * reads: the rest is dropped as it streams by, so padding costs nothing (#27).
 */

/**
 * @typedef {{ keys: Map<string, Spec>, any: Spec, raw: { bytes: Buffer, spec: Spec }[] }} Pick  an object's members
 *   kept, by key (`any`: the others; raw: the keys as bytes, to match a key without escapes unread)
 */
/** @typedef {Pick | 'keep' | 'drop' | 'top' | 'files'} Spec  what is kept of a value ('top', 'files': the outer two) */

/** @param {Record<string, Spec>} keys @param {Spec} [any] @returns {Pick} */
const pick = (keys, any = 'drop') => ({
  keys: new Map(Object.entries(keys)), any,
  raw: Object.entries(keys).map(([k, spec]) => ({ bytes: Buffer.from(k), spec })),
});
/** @type {Pick} what serving reads of a file's entry (lib/manifest/manifest.js FileEntry) */
const ENTRY = pick({
  size: 'keep', mtimeMs: 'keep', hash: 'keep', type: 'keep', skipped: 'keep', hashed: 'keep',
  variants: pick({}, pick({ size: 'keep' })),
  dictionary: pick({ hash: 'keep', match: 'keep', dest: 'keep', hashed: 'keep' }),
  deltas: pick({}, pick({}, pick({ size: 'keep', hash: 'keep' }))),
});
/** the head's members kept (`settings` whole: the ETags hash it) */
const HEAD = pick({ schema: 'keep', settings: 'keep', siteDictionary: pick({ path: 'keep', hash: 'keep' }) });

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longest key looked up in a Pick (a longer one is no key of ours), and longest file path kept. */
const MAX_KEY = 64;
const MAX_PATH = 1 << 16;
/** Room before the files for the head (a larger head is joined to them by a copy). */
const HEAD_ROOM = 1 << 16;
const FILES_LINE = Buffer.from('\n "files": {\n');
const FILES = Buffer.from('files');
const [FIRST_LINE, NEXT_LINE, KEY_END] = [Buffer.from('  "'), Buffer.from(',\n  "'), Buffer.from('":')];
const [LINE, COMMA_LINE] = [Buffer.from('  '), Buffer.from(',\n  ')];

/**
 * An open object or array: what is kept of it, where its kept text goes, and what comes next.
 * @typedef {{ spec: Spec, array: boolean, out: Out | null, at: 'first' | 'key' | 'colon' | 'value' | 'next',
 *   count: number, vspec: Spec, vout: Out | null }} Frame  vspec, vout: those of the member under way
 */

/**
 * A file's line as writeManifest() writes it, with only fields serving reads: copied whole (the common
 * case); anything else goes through JsonScan.
 */
const STR = String.raw`"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
const NUM = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;
const obj = (/** @type {string} */ member) => String.raw`\{(?:(?:${member})(?:,(?:${member}))*)?\}`;
const VARIANT = obj(`"size":${NUM}`);
const DELTA = obj(`"size":${NUM}|"hash":${STR}`);
const FIELD = [
  `"(?:size|mtimeMs)":${NUM}`, `"(?:hash|type|skipped)":${STR}`, '"hashed":(?:true|false)',
  `"variants":${obj(`"(?:${ENCODING_NAMES.join('|')})":${VARIANT}`)}`,
  `"dictionary":${obj(`"(?:hash|match)":${STR}|"dest":(?:null|${STR})|"hashed":(?:true|false)`)}`,
  `"deltas":${obj(`${STR}:${obj(`"(?:${DELTA_NAMES.join('|')})":${DELTA}`)}`)}`,
].join('|');
const PLAIN_LINE = new RegExp(String.raw`
  (${STR}): ${obj(FIELD)}`, 'y');

/** @typedef {{ bytes: Buffer, checkAll: boolean }} Compact  a manifest's kept text; checkAll: see end() */

class Out {
  /** @param {number} size @param {number} [from] bytes left free at the start */
  constructor(size, from = 0) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 256));
    this.n = from;
  }

  /** @param {number} need */
  room(need) {
    if (this.n + need <= this.buf.length) return;
    const buf = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + need));
    this.buf.copy(buf, 0, 0, this.n);
    this.buf = buf;
  }

  /** @param {number} c */
  byte(c) {
    if (this.n === this.buf.length) this.room(1);
    this.buf[this.n++] = c;
  }

  /** @param {Buffer} b @param {number} [start] @param {number} [end] */
  bytes(b, start = 0, end = b.length) {
    this.room(end - start);
    this.n += b.copy(this.buf, this.n, start, end);
  }
}

/**
 * A JSON text taken a piece at a time, its kept text written to the containers' outputs; `member()`
 * decides what is kept.
 */
class JsonScan {
  /** @type {Frame[]} */
  stack = [];
  /** bytes before the current piece (for messages) */
  pos = 0;
  /** a string under way: a key (its raw bytes in `key`) or a value; after a backslash in it */
  string = /** @type {'key' | 'value' | null} */ (null);
  escaped = false;
  key = new Out(256);
  /** a number or literal under way */
  word = false;
  ended = false;
  /** white space inside the files object; the current piece as latin1 text, made when a line is matched */
  filesSpaces = 0;
  text = /** @type {string | null} */ (null);

  /** @param {string} file for messages */
  constructor(file) {
    this.file = file;
  }

  /**
   * Take the next piece of the file. Throws ERR_PRECOMPRESSOR_MANIFEST when it is not JSON.
   * @param {Buffer} b
   */
  push(b) {
    this.text = null;
    for (let i = 0; i < b.length; i++) {
      const c = b[i];
      const line = c === 0x0a && this.string === null && !this.word ? this.lineAt(b, i) : -1;
      if (line !== -1) {
        i = line - 1;
      } else if (this.string !== null && !this.escaped && c >= 0x20 && c !== QUOTE && c !== BACKSLASH) {
        i = stringRun(this, b, i) - 1; // the plain bytes of a string, at once
      } else if (this.string !== null) {
        stringByte(this, c, i);
      } else if (this.word && isWordByte(c)) {
        let j = i + 1;
        while (j < b.length && isWordByte(b[j])) j++;
        this.stack[this.stack.length - 1].vout?.bytes(b, i, j); // the rest of a number or literal, at once
        i = j - 1;
      } else {
        if (this.word) this.valueDone();
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) token(this, c, i);
        else if (this.stack.length > 1 && this.stack[1].spec === 'files') this.filesSpaces++;
      }
    }
    this.pos += b.length;
  }

  /**
   * A line of writeManifest()'s at `i` (its newline) copied whole: where it ends; -1 when there is none.
   * @param {Buffer} _b
   * @param {number} _i
   */
  lineAt(_b, _i) {
    return -1;
  }

  /**
   * A member's key and colon are read: set what is kept of its value (vspec, vout), and write its key.
   * @param {Frame} top
   */
  member(top) {
    [top.vspec, top.vout] = ['drop', null];
  }

  /**
   * The first byte of a value, in `top` (an object's member or an array's item).
   * @param {Frame} top
   * @param {number} c
   * @param {number} i
   */
  value(top, c, i) {
    const { vspec: spec, vout: out } = top;
    top.at = 'next';
    if (c === 0x7b || c === 0x5b) {
      out?.byte(c);
      const kept = spec === 'drop' ? 'drop' : c === 0x5b ? 'keep' : spec;
      this.stack.push(frame(kept, c === 0x5b, kept === 'drop' ? null : out));
    } else if (c === QUOTE) {
      out?.byte(c);
      this.string = 'value';
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e) {
      out?.byte(c);
      this.word = true;
    } else {
      throw this.fail('a value expected', i);
    }
  }

  /** A string, number or literal value has ended. */
  valueDone() {
    this.word = false;
  }

  /** @param {Frame} top */
  close(top) {
    this.stack.pop();
    if (top.spec !== 'top' && top.spec !== 'files') top.out?.byte(top.array ? 0x5d : 0x7d);
    if (this.stack.length === 0) this.ended = true;
  }

  /**
   * @param {string} what
   * @param {number} i
   */
  fail(what, i) {
    return invalidManifest(this.file, `not valid JSON (${what} at byte ${this.pos + i})`);
  }

}

/**
 * A manifest's JSON text made into writeManifest()'s layout with only what serving reads.
 */
export class ManifestCompactor extends JsonScan {
  entries = 0;
  sawFiles = false;

  /**
   * @param {string} file for messages
   * @param {number} size the file's size: the kept text is at most about this
   */
  constructor(file, size) {
    super(file);
    this.head = new Out(1024);
    this.files = new Out(size + HEAD_ROOM + 1024, HEAD_ROOM);
  }

  /**
   * A member's key and colon are read: what is kept of its value, and its key written where it goes.
   * @param {Frame} top
   */
  member(top) {
    top.at = 'value';
    const { spec } = top;
    const { key } = this;
    if (spec === 'drop') [top.vspec, top.vout] = ['drop', null];
    else if (spec === 'files') {
      const out = this.files;
      const long = key.n >= MAX_PATH; // no file path of ours
      [top.vspec, top.vout] = long ? ['drop', null] : [ENTRY, out];
      if (long) return;
      out.bytes(this.entries++ > 0 ? NEXT_LINE : FIRST_LINE);
      out.bytes(key.buf, 0, key.n);
      out.bytes(KEY_END);
    } else {
      const of = spec === 'top' ? HEAD : spec;
      const vspec = spec === 'top' && sameBytes(key, FILES) ? 'files' : specOf(of, key);
      const out = spec === 'top' ? (vspec === 'files' ? null : this.head) : top.out;
      [top.vspec, top.vout] = [vspec, vspec === 'drop' ? null : out];
      if (vspec === 'drop' || vspec === 'files' || out === null) return;
      const count = spec === 'top' ? this.head.n : top.count++;
      if (count > 0) out.byte(0x2c);
      out.byte(QUOTE);
      out.bytes(key.buf, 0, key.n);
      out.bytes(KEY_END);
    }
  }

  /**
   * @param {Buffer} b
   * @param {number} i
   */
  lineAt(b, i) {
    const top = this.stack[this.stack.length - 1];
    if (top === undefined || top.spec !== 'files' || (top.at !== 'first' && top.at !== 'key')) return -1;
    const text = (this.text ??= b.toString('latin1')); // one byte, one character: offsets are the same
    PLAIN_LINE.lastIndex = i;
    if (!PLAIN_LINE.test(text)) return -1;
    this.files.bytes(this.entries++ > 0 ? COMMA_LINE : LINE);
    this.files.bytes(b, i + 3, PLAIN_LINE.lastIndex);
    this.filesSpaces += 4;
    top.at = 'next';
    return PLAIN_LINE.lastIndex;
  }

  /**
   * The first byte of a value: the files object is the one whose members are lines.
   * @param {Frame} top
   * @param {number} c
   * @param {number} i
   */
  value(top, c, i) {
    if (top.vspec !== 'files') return super.value(top, c, i);
    if (c !== 0x7b || this.sawFiles) throw invalidManifest(this.file, '"files" is not an object');
    this.sawFiles = true;
    top.at = 'next';
    this.stack.push(frame('files', false, this.files));
  }

  /**
   * The end: the kept text, and whether every entry must be checked at once (not writeManifest()'s text).
   * @returns {Compact}
   */
  end() {
    if (this.word) this.valueDone();
    if (!this.ended) throw this.fail('the text ends early', 0);
    const members = this.head.buf.subarray(0, this.head.n);
    // no files: refused when indexed, as readManifest() refuses it
    if (!this.sawFiles) return { bytes: Buffer.concat([Buffer.from('{'), members, Buffer.from('}')]), checkAll: true };
    const head = Buffer.concat([Buffer.from('{'), members, Buffer.from(this.head.n > 0 ? ',' : '')]);
    const out = this.files;
    out.bytes(Buffer.from(this.entries > 0 ? '\n }\n}\n' : ' }\n}\n'));
    const lead = Buffer.concat([head, FILES_LINE]);
    let text;
    if (lead.length <= HEAD_ROOM) {
      lead.copy(out.buf, HEAD_ROOM - lead.length);
      text = out.buf.subarray(HEAD_ROOM - lead.length, out.n);
    } else {
      text = Buffer.concat([lead, out.buf.subarray(HEAD_ROOM, out.n)]);
    }
    // any text but writeManifest()'s layout (padding) has every entry checked at once (#27)
    const checkAll = this.filesSpaces !== 4 * this.entries + 2;
    // far less kept than read (a padded file): hold only what is kept
    return { bytes: text.length < out.buf.length / 2 ? Buffer.from(text) : text, checkAll };
  }
}

/**
 * A byte of a string that is not plain: an escape, its end, or a control byte (refused).
 * @param {JsonScan} scan
 * @param {number} c
 * @param {number} i
 */
function stringByte(scan, c, i) {
  const top = scan.stack[scan.stack.length - 1];
  const out = scan.string === 'key' ? (top.spec === 'drop' ? null : scan.key) : top.vout;
  if (scan.escaped) scan.escaped = false;
  else if (c === BACKSLASH) scan.escaped = true;
  else if (c === QUOTE) return stringDone(scan);
  else if (c < 0x20) throw scan.fail('a control character in a string', i);
  if (out !== null && (out !== scan.key || out.n < MAX_PATH)) out.byte(c);
}

/** @param {JsonScan} scan */
function stringDone(scan) {
  const top = scan.stack[scan.stack.length - 1];
  if (scan.string === 'key') {
    scan.string = null;
    top.at = 'colon';
    return;
  }
  scan.string = null;
  top.vout?.byte(QUOTE);
  scan.valueDone();
}


/**
 * @param {JsonScan} scan
 * @param {number} c
 * @param {number} i
 */
function token(scan, c, i) {
  const top = scan.stack[scan.stack.length - 1];
  if (top === undefined) {
    if (scan.ended) throw scan.fail('more after the end', i);
    if (c !== 0x7b) throw invalidManifest(scan.file, 'not a JSON object');
    scan.stack.push(frame('top', false, null));
    return;
  }
  if ((c === 0x7d && !top.array) || (c === 0x5d && top.array)) {
    if (top.at !== 'first' && top.at !== 'next') throw scan.fail('an unexpected end', i);
    return scan.close(top);
  }
  if (c === 0x2c && top.at === 'next') {
    top.at = top.array ? 'value' : 'key';
    if (top.array) top.out?.byte(c);
    return;
  }
  if (!top.array && (top.at === 'first' || top.at === 'key')) {
    if (c !== QUOTE) throw scan.fail('a key expected', i);
    scan.key.n = 0;
    scan.string = 'key';
    return;
  }
  if (!top.array && top.at === 'colon') {
    if (c !== 0x3a) throw scan.fail('a colon expected', i);
    return scan.member(top);
  }
  if (top.at !== 'value' && !(top.array && top.at === 'first')) throw scan.fail('a comma expected', i);
  if (top.array) [top.vspec, top.vout] = [top.spec, top.out];
  scan.value(top, c, i);
}


/**
 * Copy the bytes of a string from `i` up to its next quote, backslash or control byte; where they end.
 * @param {JsonScan} scan
 * @param {Buffer} b
 * @param {number} i
 */
function stringRun(scan, b, i) {
  let j = i + 1;
  for (let c = b[j]; j < b.length && c >= 0x20 && c !== QUOTE && c !== BACKSLASH; c = b[++j]);
  const top = scan.stack[scan.stack.length - 1];
  const { key } = scan;
  const out = scan.string === 'key' ? (top.spec === 'drop' ? null : key) : top.vout;
  if (out === key) {
    const stop = Math.min(j, i + MAX_PATH - key.n); // a key is kept up to MAX_PATH bytes (longer: dropped)
    if (stop > i) key.bytes(b, i, stop);
  } else if (out !== null) {
    out.bytes(b, i, j);
  }
  return j;
}

/**
 * @param {Spec} spec
 * @param {boolean} array
 * @param {Out | null} out
 * @returns {Frame}
 */
function frame(spec, array, out) {
  return { spec, array, out, at: 'first', count: 0, vspec: 'drop', vout: null };
}

/**
 * What is kept of the member whose key's raw bytes are in `key` of an object kept as `of`.
 * @param {Spec} of
 * @param {Out} key
 * @returns {Spec}
 */
function specOf(of, key) {
  if (typeof of !== 'object') return of === 'keep' ? 'keep' : 'drop';
  if (key.n > MAX_KEY) return of.any; // no key of ours
  if (key.buf.indexOf(BACKSLASH) !== -1 && key.buf.indexOf(BACKSLASH) < key.n) {
    const name = keyOf(key.buf.subarray(0, key.n)); // escapes: read it as JSON does
    return (name === null ? undefined : of.keys.get(name)) ?? of.any;
  }
  for (const k of of.raw) if (sameBytes(key, k.bytes)) return k.spec;
  return of.any;
}

/**
 * @param {Out} key
 * @param {Buffer} bytes
 */
function sameBytes(key, bytes) {
  if (key.n !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (key.buf[i] !== bytes[i]) return false;
  return true;
}

/** A byte of a number or literal (`-1.5e+3`, `true`). @param {number} c */
function isWordByte(c) {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x45;
}

/**
 * A key's text from its raw bytes (escapes decoded); null when it does not decode.
 * @param {Buffer} raw
 */
function keyOf(raw) {
  if (!raw.includes(BACKSLASH)) return raw.toString('utf8');
  try {
    return /** @type {string} */ (JSON.parse(`"${raw.toString('utf8')}"`));
  } catch {
    return null;
  }
}
