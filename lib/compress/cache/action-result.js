/**
 * Our key → blob mapping under Bazel's `/ac/` as a Remote Execution API ActionResult (pure), which
 * bazel-remote validates: `output_files` names the blob, `stdout_raw` holds our record as JSON.
 *
 * @typedef {{ key: string, size: number, bytes: number, encodeMs: number, sha256: string | null }} RemoteRecord
 *   sha256: hex of the blob in the CAS (null when bytes is 0)
 */

const OUTPUT_PATH = 'precompressor-entry';
const HEX64 = /^[0-9a-f]{64}$/;

/** @param {number} n a non-negative safe integer */
function varint(n) {
  const out = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}

/**
 * @param {number} field
 * @param {Buffer} bytes
 */
const lenField = (field, bytes) => Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);

/**
 * @param {RemoteRecord} rec
 */
export function encodeActionResult(rec) {
  const json = JSON.stringify({ precompressor: 1, key: rec.key, size: rec.size, bytes: rec.bytes,
    encodeMs: Math.round(rec.encodeMs * 1000) / 1000 });
  const parts = [];
  if (rec.bytes > 0 && rec.sha256 !== null) {
    const digest = Buffer.concat([lenField(1, Buffer.from(rec.sha256)), varint((2 << 3) | 0), varint(rec.bytes)]);
    parts.push(lenField(2, Buffer.concat([lenField(1, Buffer.from(OUTPUT_PATH)), lenField(2, digest)])));
  }
  parts.push(lenField(5, Buffer.from(json)));
  return Buffer.concat(parts);
}

/**
 * The fields of a protobuf message: field number → values (Buffer for length-delimited, number
 * for varints); throws on a malformed message.
 * @param {Buffer} buf
 * @returns {Map<number, (Buffer | number)[]>}
 */
function fields(buf) {
  /** @type {Map<number, (Buffer | number)[]>} */
  const out = new Map();
  let i = 0;
  const readVarint = () => {
    let n = 0;
    let mul = 1;
    for (let shift = 0; shift < 64; shift += 7) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++];
      n += (b & 0x7f) * mul;
      mul *= 0x80;
      if (b < 0x80) return n;
    }
    throw new Error('varint too long');
  };
  while (i < buf.length) {
    const tag = readVarint();
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    /** @type {Buffer | number} */
    let value;
    if (wire === 0) value = readVarint();
    else if (wire === 2) {
      const len = readVarint();
      if (i + len > buf.length) throw new Error('truncated field');
      value = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 1 || wire === 5) {
      i += wire === 1 ? 8 : 4;
      if (i > buf.length) throw new Error('truncated field');
      continue;
    } else throw new Error(`wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

/**
 * A length-delimited field's first value, or undefined.
 * @param {Map<number, (Buffer | number)[]>} f
 * @param {number} n
 */
const bytesOf = (f, n) => {
  const v = f.get(n)?.[0];
  return Buffer.isBuffer(v) ? v : undefined;
};

/**
 * The record an ActionResult holds for `key`, or null when it is not one of ours for that key
 * (malformed, another key, fields that disagree).
 * @param {Buffer} buf
 * @param {string} key
 * @returns {RemoteRecord | null}
 */
export function decodeActionResult(buf, key) {
  try {
    const ar = fields(buf);
    const raw = bytesOf(ar, 5);
    const rec = raw === undefined ? null : JSON.parse(raw.toString('utf8'));
    if (rec?.precompressor !== 1 || rec.key !== key || !Number.isSafeInteger(rec.size) || rec.size < 0 ||
      !Number.isSafeInteger(rec.bytes) || typeof rec.encodeMs !== 'number' ||
      (rec.bytes !== 0 && rec.bytes !== rec.size)) {
      return null;
    }
    if (rec.bytes === 0) return { key, size: rec.size, bytes: 0, encodeMs: rec.encodeMs, sha256: null };
    const file = (ar.get(2) ?? []).map((v) => (Buffer.isBuffer(v) ? fields(v) : null))
      .find((f) => f !== null && bytesOf(f, 1)?.toString('utf8') === OUTPUT_PATH);
    const digestBytes = file ? bytesOf(file, 2) : undefined;
    const digest = digestBytes === undefined ? null : fields(digestBytes);
    const hash = digest === null ? undefined : bytesOf(digest, 1)?.toString('utf8');
    const size = digest?.get(2)?.[0] ?? 0; // proto3 leaves a zero out
    if (hash === undefined || !HEX64.test(hash) || size !== rec.bytes) return null;
    return { key, size: rec.size, bytes: rec.bytes, encodeMs: rec.encodeMs, sha256: hash };
  } catch {
    return null;
  }
}
