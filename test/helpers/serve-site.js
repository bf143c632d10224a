import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import http from 'node:http';
import { manifestText } from '../../lib/manifest/manifest.js';

/**
 * Test helper for the serve tests: builds a site with its variants and a schema-1 manifest
 * directly with node:zlib, so the serve tests do not depend on the compressor. The manifest is in
 * writeManifest()'s layout (one line per file), or with `layout: 'indented'` in earlier versions'.
 */

export const ENCODERS = {
  br: { suffix: '.br', encode: (b) => zlib.brotliCompressSync(b), decode: (b) => zlib.brotliDecompressSync(b) },
  gzip: { suffix: '.gz', encode: (b) => zlib.gzipSync(b, { level: 9 }), decode: (b) => zlib.gunzipSync(b) },
  zstd: { suffix: '.zst', encode: null, decode: null },
};
if (typeof zlib.zstdCompressSync === 'function') {
  ENCODERS.zstd.encode = (b) => zlib.zstdCompressSync(b);
  ENCODERS.zstd.decode = (b) => zlib.zstdDecompressSync(b);
}

export function hashOf(buf) {
  return 'sha256-' + crypto.createHash('sha256').update(buf).digest('base64url');
}

/**
 * Write `files` under a new mkdtemp folder, variants for each file whose compressed form is smaller
 * (for the encodings given), and the manifest.
 * @param {Record<string, string | Buffer>} files
 * @param {{ encodings?: string[], noVariants?: string[], manifest?: string | null, dir?: string, layout?: 'indented' }} [opts]
 *   noVariants: paths to list with `variants: {}`; manifest: path relative to dir (null: none)
 */
export async function makeSite(files, opts = {}) {
  const dir = opts.dir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'pc-serve-')));
  const encodings = opts.encodings ?? ['br', 'gzip'];
  const entries = {};
  for (const [rel, content] of Object.entries(files)) {
    const buf = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const abs = path.join(dir, ...rel.split('/'));
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, buf);
    const st = await fs.stat(abs);
    const variants = {};
    if (!(opts.noVariants ?? []).includes(rel)) {
      for (const enc of encodings) {
        const out = ENCODERS[enc].encode(buf);
        if (out.length < buf.length) {
          await fs.writeFile(abs + ENCODERS[enc].suffix, out);
          variants[enc] = { size: out.length };
        }
      }
    }
    entries[rel] = { size: buf.length, mtimeMs: st.mtimeMs, hash: hashOf(buf), variants };
    if (Object.keys(variants).length === 0) entries[rel].skipped = buf.length === 0 ? 'empty' : 'not-smaller';
  }
  const sorted = Object.fromEntries(Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : 1)));
  const manifest = {
    schema: 1, tool: 'precompressor@test', settings: { encodings, brotliQuality: 11, gzipLevel: 9, minRatio: 1 },
    generatedAt: new Date().toISOString(), files: sorted,
  };
  const manifestPath = opts.manifest === null ? null : path.join(dir, opts.manifest ?? 'precompressor-manifest.json');
  if (manifestPath) await fs.mkdir(path.dirname(manifestPath), { recursive: true });
  const text = opts.layout === 'indented' ? JSON.stringify(manifest, null, 1) : [...manifestText(manifest)].join('');
  if (manifestPath) await fs.writeFile(manifestPath, text);
  return { dir, manifest, manifestPath };
}

/** Start a node:http server on port 0 around `handler`; returns { port, close }. */
export async function listen(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    server, port,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve(undefined));
    }),
  };
}

/**
 * Raw request (the path is sent exactly as given, no URL normalisation).
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, rawHeaders: string[], body: Buffer }>}
 */
export function request(port, reqPath, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: reqPath, method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: /** @type {number} */ (res.statusCode), headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * GET each of `paths` through a middleware (404 when it passes on) on a server of its own, one after
 * another; `pick` makes each answer's row. The middleware is closed (when it can be) with the server.
 * @param {any} mw
 * @param {string[]} paths
 * @param {Record<string, string>} headers
 * @param {(p: string, r: Awaited<ReturnType<typeof request>>) => unknown[]} pick
 */
export async function getEach(mw, paths, headers, pick) {
  const srv = await listen((req, res) => mw(req, res, () => {
    res.statusCode = 404;
    res.end();
  }));
  try {
    const out = [];
    for (const p of paths) out.push(pick(p, await request(srv.port, p, { headers })));
    return out;
  } finally {
    mw.close?.();
    await srv.close();
  }
}

/** Decode a body according to its Content-Encoding. */
export function decode(res) {
  const enc = res.headers['content-encoding'];
  if (!enc) return res.body;
  const e = Object.values(ENCODERS).find((x, i) => Object.keys(ENCODERS)[i] === enc);
  if (!e?.decode) throw new Error(`cannot decode ${enc}`);
  return e.decode(res.body);
}

/**
 * A site (makeSite) and a node:http server around `serveStatic(dir, options)`; what to undo is
 * pushed on `cleanup` (run it in afterAll).
 * @param {(dir: string, options: object) => any} serveStatic
 * @param {Array<() => Promise<void>>} cleanup
 * @param {Record<string, string | Buffer>} files
 * @param {object} [options]
 * @param {Parameters<typeof makeSite>[1]} [siteOpts]
 */
export async function serveSite(serveStatic, cleanup, files, options = {}, siteOpts = {}) {
  const site = await makeSite(files, siteOpts);
  const mw = serveStatic(site.dir, options);
  const srv = await listen(mw);
  cleanup.push(async () => {
    mw.close();
    await srv.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  });
  const get = (p, headers = {}, method = 'GET') => request(srv.port, p, { headers, method });
  return { ...site, mw, srv, get };
}
