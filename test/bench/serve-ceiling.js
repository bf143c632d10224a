// The node:http ceiling of the serving benchmarks (./serve.js's `node-http-ceiling` row, and the
// fixed-response handler of ./serve-cost.js): not a usable server, the most node:http can do with
// any handler. At startup every file (its .br when there is one) is read into a Map from URL path
// to the header array our middleware sends for it (same names, same value formats) and the body;
// each request is one lookup on req.url and `writeHead(200, head); end(body)`: no negotiation, no
// checks of any kind.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { listFiles } from './corpus.js';

/**
 * The responses of the compressed folder `root`, by URL path, with the helpers of `repoRoot`.
 * @param {string} root
 * @param {string} repoRoot
 * @returns {Promise<Map<string, { head: string[], body: Buffer }>>}
 */
export async function ceilingResponses(root, repoRoot) {
  const lib = (name) => import(pathToFileURL(path.join(repoRoot, 'lib', name)).href);
  const { contentTypeOf, etagOf, settingsTagOf } = await lib('serve/site/table.js');
  const { normalizeServeOptions } = await lib('serve/http/options.js');
  const { cacheControl } = normalizeServeOptions(root, { watch: false });
  const tag = settingsTagOf(null);
  const files = await listFiles(root);
  const names = new Set(files.map((f) => f.rel));
  const SUFFIX = /\.(br|gz|zst)$/;
  const responses = new Map();
  for (const f of files) {
    if (f.rel === 'precompressor-manifest.json' || (SUFFIX.test(f.rel) && names.has(f.rel.replace(SUFFIX, '')))) continue;
    const br = names.has(`${f.rel}.br`);
    const body = fs.readFileSync(br ? `${f.abs}.br` : f.abs);
    const hash = crypto.createHash('sha256').update(body).digest('base64url');
    const head = ['Content-Type', contentTypeOf(f.rel), 'Content-Length', String(body.length)];
    if (br) head.push('Content-Encoding', 'br');
    head.push('Accept-Ranges', 'bytes', 'Last-Modified', fs.statSync(f.abs).mtime.toUTCString());
    if (['.br', '.gz', '.zst'].some((x) => names.has(f.rel + x))) head.push('Vary', 'Accept-Encoding');
    head.push('ETag', etagOf(hash, br ? 'br' : 'identity', body.length, tag), 'Cache-Control', cacheControl);
    responses.set('/' + f.rel.split('/').map(encodeURIComponent).join('/'), { head, body });
  }
  return responses;
}

/**
 * The ceiling's handler: the response of `req.url`, else `notFound`.
 * @param {Map<string, { head: string[], body: Buffer }>} responses
 * @param {(res: import('node:http').ServerResponse) => void} notFound
 */
export function ceilingHandler(responses, notFound) {
  return (req, res) => {
    const r = responses.get(req.url);
    if (r === undefined) return notFound(res);
    res.writeHead(200, r.head);
    res.end(r.body);
  };
}
