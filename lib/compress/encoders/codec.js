import { PrecompressorError } from '../../errors.js';

/**
 * What a codec is: how the compressor makes and checks one encoding (lib/compress/encoders/encode.js holds
 * the codec of each encoding of the registry, lib/encodings.js).
 */

/**
 * @typedef {{ size: number, mode: 'text' | 'font' | 'generic', brotliQuality: number, gzipLevel: number,
 *   zstdLevel?: number, zopfli?: boolean }} EncodeParams
 * @typedef {{ maxOutputLength?: number, chunkSize?: number }} DecodeOptions
 * @typedef {object} Codec
 * @property {(p: EncodeParams) => any} options the encoder's options for one file (JSON-serializable: in the cache key)
 * @property {(opts: { zopfli?: boolean }) => number} costPerByte relative CPU cost (docs/benchmarks.md,
 *   "Figures behind design constants")
 * @property {(opts: { zopfli: boolean }) => void} check throws ERR_PRECOMPRESSOR_ENCODING when this installation
 *   cannot encode it (probed at run time: Node's zstd, the optional WebAssembly packages)
 * @property {(options: any) => Promise<void>} load loads in this thread what encodeSync() needs (WebAssembly)
 * @property {(buf: Buffer, options: any) => Buffer} encodeSync
 * @property {(buf: Buffer, options: any) => Promise<Buffer>} encode off this thread where it can (libuv's pool)
 * @property {(options: any) => boolean} canStream can it encode a file without holding it in memory?
 * @property {(options: any) => import('node:stream').Transform} createEncoder
 * @property {(buf: Buffer, opts: DecodeOptions) => Buffer} decodeSync
 * @property {(() => import('node:stream').Transform) | null} createDecoder null: this Node cannot stream-decode it
 *
 * @typedef {{ dictionary?: Buffer, params?: Record<number, number> }} DeltaOptions
 * @typedef {object} DeltaCodec an encoding against a dictionary (RFC 9842): its body is magic, the
 *   dictionary's SHA-256, then the stream
 * @property {Buffer} magic
 * @property {(size: number, dict: Buffer) => DeltaOptions} options
 * @property {(dict: Buffer) => boolean} accepts can `dict` be used as its dictionary?
 * @property {(stream: Buffer, dict: Buffer) => boolean} fits may a client decode `stream` (its window)?
 * @property {(b: Buffer, o: DeltaOptions) => Buffer} compress
 * @property {(b: Buffer, o: DeltaOptions) => Buffer} decompress
 * @property {((b: Buffer, o: DeltaOptions) => Promise<Buffer>) | null} encode off this thread, or null (not here)
 * @property {(dict: Buffer) => DeltaOptions} scoreOptions quick options, to rank candidate dictionaries
 * @property {DeltaOptions} probeOptions the cheapest options that still use a dictionary, to probe for one
 * @property {boolean} scoresFast the one to rank them with, when this Node has it
 */

/**
 * One output chunk per ~file (capped) keeps the main-thread/pool round trips per file low.
 * @param {number} size
 */
export const chunkSizeFor = (size) => Math.min(Math.max(16 * 1024, size), 1024 * 1024);

/**
 * The error of an encoder used before loadEncoder() loaded it in this thread.
 * @param {string} what
 */
export function notLoaded(what) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
    `${what} is not loaded in this thread: await loadEncoder() before encodeBufferSync()`);
}
