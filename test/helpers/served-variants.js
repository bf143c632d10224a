// What a postbuild recipe's folder must answer under `precompressor serve`: each variant as written,
// its exact length, and decoded byte for byte to the file it stands for.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { get } from './framework-app.js';
import { decodeDelta } from './delta.js';

const DECODE = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync };
const SUFFIX = { br: '.br', gzip: '.gz' };

/**
 * GET `url` with only `encoding` accepted: it is sent, with the Content-Length of `rel`'s variant on
 * disk, the body that variant byte for byte, decoding to `rel`. Resolves with the response.
 * @param {string} origin
 * @param {string} dir the folder served
 * @param {string} rel the file in it
 * @param {'br' | 'gzip'} encoding
 * @param {string} [url] the path asked for (`/${rel}` unless given)
 * @param {Record<string, string>} [headers]
 */
export async function expectVariant(origin, dir, rel, encoding, url = `/${rel}`, headers = {}) {
  const r = await get(`${origin}${url}`, { 'accept-encoding': encoding, ...headers });
  const variant = fs.readFileSync(path.join(dir, rel + SUFFIX[encoding]));
  expect([r.status, r.headers['content-encoding'], r.headers['content-length']]).toEqual([200, encoding, String(variant.length)]);
  expect(r.body.equals(variant)).toBe(true);
  expect(DECODE[encoding](r.body).equals(fs.readFileSync(path.join(dir, rel)))).toBe(true);
  return r;
}

/** The Available-Dictionary value of a dictionary's bytes (RFC 9842: its SHA-256, a structured byte sequence). */
export const availableDictionary = (dict) => `:${crypto.createHash('sha256').update(dict).digest('base64')}:`;

/**
 * GET `url` as a browser holding `dict` would (Available-Dictionary, `encoders` accepted beside br):
 * a delta is sent, its Content-Length the body's, decoding against `dict` to `rel`. Resolves with the
 * encoding sent and its length (for the caller to hold against the manifest).
 * @param {string} origin
 * @param {string} dir
 * @param {string} rel
 * @param {Buffer} dict
 * @param {readonly string[]} encoders the delta encodings this Node makes (dcb, dcz)
 * @param {Record<string, string>} [headers] e.g. Accept for a navigation
 * @param {string} [url]
 */
export async function expectDelta(origin, dir, rel, dict, encoders, headers = {}, url = `/${rel}`) {
  const r = await get(`${origin}${url}`, { 'accept-encoding': ['br', ...encoders].join(', '), 'available-dictionary': availableDictionary(dict), ...headers });
  const enc = /** @type {'dcb' | 'dcz'} */ (r.headers['content-encoding']);
  expect(encoders).toContain(enc);
  expect(r.headers['content-length']).toBe(String(r.body.length));
  expect(decodeDelta(enc, r.body, dict).equals(fs.readFileSync(path.join(dir, rel)))).toBe(true);
  return { encoding: enc, bytes: r.body.length };
}
