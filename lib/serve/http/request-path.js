import encodeUrl from 'encodeurl';

/**
 * Request target → safe relative path, decoded once segment by segment (pure; no URL class, which
 * would normalise `..` away). What is rejected, and why: docs/express-static.md.
 */

/**
 * @typedef {{ ok: true, rel: string, slash: boolean, dotfile: boolean }} PathOk
 *   rel: POSIX path relative to root without leading slash ('' for the root);
 *   slash: the request ended with '/' (a folder was asked for);
 *   dotfile: some segment starts with '.'
 * @typedef {{ ok: false, status: 400 | 403, reason: string }} PathError
 */

const ENCODED_SEPARATOR = /%(2f|5c)/i;
const PERCENT = /%/;
/** What only the segment-by-segment checks can judge: escapes, backslashes, NUL, empty and dot segments. */
const NEEDS_SEGMENTS = /[%\\\0]|\/[./]/;

/**
 * @param {string} url raw `req.url` (origin-form `/a/b?x`, or absolute-form `http://h/a/b`)
 * @param {{ windows?: boolean }} [opts]
 * @returns {PathOk | PathError}
 */
export function parseRequestPath(url, opts = {}) {
  if (typeof url !== 'string') return fail(400, 'no request target');
  let p = url;
  const q = endOfPath(p);
  if (q !== p.length) p = p.slice(0, q);
  if (p[0] !== '/') {
    // absolute-form (proxies): scheme://authority/path
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(p);
    if (!m) return fail(400, 'request target is not a path');
    p = m[1] ?? '/';
  }
  if (!opts.windows && !NEEDS_SEGMENTS.test(p)) return plainPath(p);
  if (p.includes('\\')) return fail(400, 'backslash in path');
  if (ENCODED_SEPARATOR.test(p)) return fail(400, 'encoded slash or backslash in path');
  const raw = p.slice(1).split('/');
  const slash = raw.length > 0 && raw[raw.length - 1] === '';
  if (slash) raw.pop();
  const decode = PERCENT.test(p);
  let dotfile = false;
  for (let i = 0; i < raw.length; i++) {
    let seg = raw[i];
    if (decode) {
      try {
        seg = decodeURIComponent(seg);
      } catch {
        return fail(400, 'malformed percent-encoding or invalid UTF-8');
      }
      raw[i] = seg;
    }
    if (seg === '') return fail(400, 'empty path segment');
    if (seg === '..') return fail(403, 'parent directory segment');
    if (seg === '.') return fail(400, 'dot segment');
    if (seg.includes('\0')) return fail(400, 'NUL byte in path');
    if (opts.windows && (seg.includes(':') || /[. ]$/.test(seg))) return fail(400, 'segment not portable to Windows');
    if (seg.charCodeAt(0) === 46 /* . */) dotfile = true;
  }
  // undecoded, the segments are the path's own text: no need to join them again
  const rel = decode ? raw.join('/') : p.slice(1, slash ? -1 : p.length);
  return { ok: true, rel, slash, dotfile };
}

/**
 * @param {string | string[]} url
 */
function endOfPath(url) {
  const q = url.indexOf('?');
  const h = url.indexOf('#');
  if (h !== -1 && (q === -1 || h < q)) return h;
  return q === -1 ? url.length : q;
}

/**
 * The common case, without allocating a segment list: a path with no escape, backslash or NUL,
 * and no segment that is empty or starts with `.`, passes every check as it is.
 * @param {string} p
 * @returns {PathOk}
 */
function plainPath(p) {
  const slash = p.charCodeAt(p.length - 1) === 47; /* / */
  return { ok: true, rel: p.slice(1, slash ? -1 : p.length), slash, dotfile: false };
}

/**
 * @param {number} status
 * @param {string} reason
 */
function fail(status, reason) {
  return /** @type {PathError} */ ({ ok: false, status, reason });
}

/**
 * Location for the trailing-slash redirect of a folder, as express.static builds it, but always on
 * the same origin: leading slashes collapsed, an absolute form's host dropped, backslashes encoded.
 * @param {string} originalUrl
 */
export function folderRedirectLocation(originalUrl) {
  const { pathname, search } = splitUrl(originalUrl);
  // encodeurl leaves `\` raw, and browsers read `/\host` as `//host`: it is encoded too
  return encodeUrl(`/${pathname.replace(/^\/+/, '')}/${search}`).replaceAll('\\', '%5C');
}

/**
 * The path and the query of a request target, without an absolute form's host or a fragment.
 * @param {string} url
 */
export function splitUrl(url) {
  let u = url;
  if (u[0] !== '/') u = u.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  u = u.replace(/#.*$/s, '');
  const q = u.indexOf('?');
  const pathname = q === -1 ? u : u.slice(0, q);
  return { pathname: pathname === '' ? '/' : pathname, search: q === -1 ? '' : u.slice(q) };
}
