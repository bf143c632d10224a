import fs from 'node:fs/promises';
import { createReadStream, createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PrecompressorError } from './errors.js';
import { contentHash, createEncoder, createHasher, encodeBuffer, zlibOptions } from './encode.js';
import { removeIfPresent, writeAtomic, writeAtomicWith } from './write.js';

/**
 * Thin I/O around the encoders: read one source, hash it, write one variant atomically (or
 * remove it when it would not be small enough). Files at or above `streamThreshold` bytes are
 * streamed, so memory stays bounded whatever their size.
 *
 * @typedef {{ hash: string, size: number, mtimeMs: number, outSize: number | null }} TaskResult
 */

/**
 * A read stream over an open descriptor that leaves it open (FileHandle streams keep a reference
 * that would make FileHandle.close() wait forever with autoClose: false).
 */
function readStreamOf(fh) {
  return createReadStream('', { fd: fh.fd, autoClose: false, start: 0, highWaterMark: 1 << 20 });
}

function changed(abs) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_FILE', `${abs} changed while it was being read`, { path: abs });
}

/**
 * Read a whole file through one descriptor and check, with fstat before and after, that it did
 * not change meanwhile.
 * @param {string} abs
 */
export async function readStable(abs) {
  const fh = await fs.open(abs, 'r');
  try {
    const before = await fh.stat();
    const buf = await fh.readFile();
    const after = await fh.stat();
    if (after.mtimeMs !== before.mtimeMs || after.size !== buf.length) throw changed(abs);
    return { buf, size: buf.length, mtimeMs: after.mtimeMs, mtime: after.mtime };
  } finally {
    await fh.close();
  }
}

/** Hash a file (streamed when large). */
export async function hashFile(abs, streamThreshold) {
  const fh = await fs.open(abs, 'r');
  try {
    const before = await fh.stat();
    const hasher = createHasher();
    let size = 0;
    if (before.size < streamThreshold) {
      const buf = await fh.readFile();
      hasher.update(buf);
      size = buf.length;
    } else {
      for await (const chunk of readStreamOf(fh)) {
        hasher.update(chunk);
        size += chunk.length;
      }
    }
    const after = await fh.stat();
    if (after.mtimeMs !== before.mtimeMs || after.size !== size) throw changed(abs);
    return { hash: hasher.digest(), size, mtimeMs: after.mtimeMs };
  } finally {
    await fh.close();
  }
}

/**
 * Compress `abs` with `encoding` into `target`.
 * @param {{ abs: string, target: string, encoding: 'br' | 'gzip', mode: 'text' | 'font' | 'generic',
 *   brotliQuality: number, gzipLevel: number, minRatio: number, streamThreshold: number, sizeHint: number }} t
 * @returns {Promise<TaskResult>}
 */
export async function compressFile(t) {
  for (let attempt = 1; ; attempt++) {
    try {
      return t.sizeHint >= t.streamThreshold ? await compressStreamed(t) : await compressBuffered(t);
    } catch (err) {
      // A file rewritten while we read it is read again; a file that keeps changing is an error.
      if (!(err instanceof PrecompressorError) || attempt >= 3) throw err;
    }
  }
}

async function compressBuffered(t) {
  const src = await readStable(t.abs);
  const hash = contentHash(src.buf);
  const out = await encodeBuffer(src.buf, t.encoding, zlibOptions(t.encoding, { ...t, size: src.size }));
  const keep = out.length < src.size * t.minRatio;
  if (keep) await writeAtomic(t.target, out, { mtime: src.mtime });
  else await removeIfPresent(t.target);
  return { hash, size: src.size, mtimeMs: src.mtimeMs, outSize: keep ? out.length : null };
}

async function compressStreamed(t) {
  const fh = await fs.open(t.abs, 'r');
  try {
    const before = await fh.stat();
    const hasher = createHasher();
    let inSize = 0;
    let outSize = 0;
    const tapIn = new Transform({
      transform(chunk, _enc, cb) {
        hasher.update(chunk);
        inSize += chunk.length;
        cb(null, chunk);
      },
    });
    const countOut = new Transform({
      transform(chunk, _enc, cb) {
        outSize += chunk.length;
        cb(null, chunk);
      },
    });
    const encoder = createEncoder(t.encoding, zlibOptions(t.encoding, { ...t, size: before.size }));
    const produce = async (/** @type {import('node:fs/promises').FileHandle} */ out) => {
      await pipeline(readStreamOf(fh), tapIn, encoder, countOut, createWriteStream('', { fd: out.fd, autoClose: false }));
      const after = await fh.stat();
      if (after.mtimeMs !== before.mtimeMs || after.size !== inSize) throw changed(t.abs);
      return outSize < inSize * t.minRatio;
    };
    const keep = await writeAtomicWith(t.target, produce, { mtime: before.mtime });
    if (!keep) await removeIfPresent(t.target);
    return { hash: hasher.digest(), size: inSize, mtimeMs: before.mtimeMs, outSize: keep ? outSize : null };
  } finally {
    await fh.close();
  }
}
