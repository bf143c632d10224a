/**
 * Request target → safe relative path. Pure: no file system, no URL class (which would silently
 * normalise `..` and `%2e%2e` away). The path is percent-decoded exactly once, segment by segment.
 *
 * Rejected (status in parentheses):
 * - malformed percent-encoding, invalid or overlong UTF-8, lone surrogates (400)
 * - NUL bytes, raw or encoded (400)
 * - encoded slashes and backslashes (`%2F`, `%5C`) and raw backslashes (400): a decoded `/` would
 *   change the path's segments after routers and guards have seen them
 * - `.` segments and empty segments (`//`) in the middle (400): the path must already be canonical
 * - `..` segments, raw or encoded (403)
 * - on Windows (`windows: true`): `:` (alternate data streams, drive letters), and segments ending
 *   in `.` or space, which Windows strips (400)
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

/**
 * @param {string} url raw `req.url` (origin-form `/a/b?x`, or absolute-form `http://h/a/b`)
 * @param {{ windows?: boolean }} [opts]
 * @returns {PathOk | PathError}
 */
export function parseRequestPath(url, opts = {}) {
  if (typeof url !== 'string') return fail(400, 'no request target');
  let p = url;
  const q = p.search(/[?#]/);
  if (q !== -1) p = p.slice(0, q);
  if (p[0] !== '/') {
    // absolute-form (proxies): scheme://authority/path
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(p);
    if (!m) return fail(400, 'request target is not a path');
    p = m[1] ?? '/';
  }
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
  return { ok: true, rel: raw.join('/'), slash, dotfile };
}

function fail(status, reason) {
  return /** @type {PathError} */ ({ ok: false, status, reason });
}

/**
 * Location for the trailing-slash redirect of a folder. Built from the original URL's path (so a
 * mount prefix is kept) with leading slashes collapsed to one, so that `//evil.example/dir`
 * cannot become a protocol-relative redirect to another origin. The query string is kept.
 * @param {string} originalUrl
 */
export function folderRedirectLocation(originalUrl) {
  let url = originalUrl;
  if (url[0] !== '/') url = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const q = url.search(/[?#]/);
  const pathname = q === -1 ? url : url.slice(0, q);
  const search = q === -1 ? '' : url.slice(q).replace(/#.*$/, '');
  const location = `${pathname.replace(/^[/\\]*/, '/')}/${search}`;
  // keep the request's bytes, but never put a control or non-ASCII character in a header
  return location.replace(/[^\x21-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}
