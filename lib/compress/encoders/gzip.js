import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { PrecompressorError } from '../../errors.js';
import { chunkSizeFor, notLoaded } from './codec.js';

/** zopfli's own default: more iterations cost time and gain less than 0.1 %. */
const ZOPFLI_ITERATIONS = 15;
const ZOPFLI_PACKAGE = '@gfx/zopfli';
/** @type {any} zopfli, once loaded in this thread */
let zopfli = null;

/** @param {unknown} err */
function zopfliUnavailable(err) {
  const message = `zopfli needs the optional package ${ZOPFLI_PACKAGE} (npm install ${ZOPFLI_PACKAGE})`;
  return new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING', message, { cause: err });
}

/** @returns {Promise<any>} */
async function loadZopfli() {
  try {
    const m = await import(ZOPFLI_PACKAGE);
    const z = m.default ?? m;
    // Its WebAssembly starts asynchronously: once a first call has gone through, later calls
    // complete synchronously.
    await z.gzipAsync(new Uint8Array(1), { numiterations: 1 });
    return z;
  } catch (err) {
    throw err instanceof PrecompressorError ? err : zopfliUnavailable(err);
  }
}

/**
 * gzip by zopfli, kept only when smaller than zlib's (on tiny files zopfli can lose a byte or two;
 * the zlib run is cheap beside zopfli's).
 * @param {Buffer} buf
 * @param {any} options
 */
function zopfliSync(buf, options) {
  if (!zopfli) throw notLoaded('zopfli');
  let out = null;
  // Once loaded, the package calls back synchronously.
  const zopfliOptions = { numiterations: options.iterations, blocksplitting: true, blocksplittingmax: 15 };
  zopfli.gzip(buf, zopfliOptions, (/** @type {any} */ err, /** @type {Uint8Array} */ r) => {
    if (err) throw err;
    out = r;
  });
  if (out === null) throw notLoaded('zopfli');
  const plain = zlib.gzipSync(buf, options.gzip);
  const z = /** @type {Uint8Array} */ (out);
  return plain.length < z.length ? plain : Buffer.from(z.buffer, z.byteOffset, z.byteLength);
}

const gzipAsync = promisify(zlib.gzip);

/**
 * gzip: zlib, or with `zopfli` zopfli in WebAssembly, whose options are `{ zopfli: true, iterations,
 * gzip }` where `gzip` are the zlib options of the plain gzip kept instead when zopfli is not smaller.
 * @type {import('./codec.js').Codec}
 */
export const gzipCodec = {
  options(p) {
    const plain = { chunkSize: chunkSizeFor(p.size), level: p.gzipLevel };
    return p.zopfli ? { zopfli: true, iterations: ZOPFLI_ITERATIONS, gzip: plain } : plain;
  },
  costPerByte: (opts) => (opts.zopfli ? 2.5 : 0.08),
  check(opts) {
    if (!opts.zopfli) return;
    try {
      createRequire(import.meta.url).resolve(ZOPFLI_PACKAGE);
    } catch (err) {
      throw zopfliUnavailable(err);
    }
  },
  async load(options) {
    if (options.zopfli) zopfli ??= await loadZopfli();
  },
  encodeSync: (buf, options) => (options.zopfli ? zopfliSync(buf, options) : zlib.gzipSync(buf, options)),
  async encode(buf, options) {
    if (!options.zopfli) return gzipAsync(buf, options);
    await gzipCodec.load(options);
    return zopfliSync(buf, options);
  },
  canStream: (options) => !options.zopfli,
  createEncoder(options) {
    if (!options.zopfli) return zlib.createGzip(options);
    throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING', 'zopfli cannot stream');
  },
  decodeSync: (buf, opts) => zlib.gunzipSync(buf, opts),
  createDecoder: () => zlib.createGunzip(),
};
