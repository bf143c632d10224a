import { STATUS_CODES } from 'node:http';
import createError from 'http-errors';

/**
 * The answers serveStatic gives without a file, shaped as express.static (serve-static + send)
 * gives them: errors for `next(err)` are `http-errors` objects, the folder redirect is send's small
 * HTML page, 405 is empty. Pure: each is a reply decision (lib/serve/core/core.js) for an adapter to write.
 */

/**
 * The error express.static passes to `next(err)` for `status`: an http-errors object; a system
 * error (EACCES, EMFILE, ...) keeps its identity and gets status 500 and `expose: false`.
 * @param {number} status
 * @param {Error | { headers: Record<string, string> }} [cause]
 */
export function httpError(status, cause) {
  if (cause === undefined) return createError(status);
  return cause instanceof Error ? createError(status, cause, { expose: false }) : createError(status, cause);
}

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text made safe for HTML content.
 * @param {string} text
 */
function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[/** @type {keyof typeof HTML_ESCAPES} */ (ch)]);
}

/**
 * The minimal HTML document of send's redirects and error pages.
 * @param {string} title
 * @param {string} text
 */
function htmlDocument(title, text) {
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n</head>\n` +
    `<body>\n<pre>${text}</pre>\n</body>\n</html>\n`;
}

/**
 * Plain-text status reply (404, 400, 500, ...) with no user data in the body.
 * @param {number} status
 * @param {string} method
 * @param {string[]} [extra] more header name/value pairs
 * @returns {import('./decision.js').Reply}
 */
export function statusReply(status, method, extra = []) {
  const body = Buffer.from(`${STATUS_CODES[status] ?? 'Error'}\n`);
  const head = [
    ...extra, 'Content-Type', 'text/plain; charset=utf-8', 'Content-Length', String(body.length),
    'X-Content-Type-Options', 'nosniff', 'Content-Security-Policy', "default-src 'none'",
  ];
  return { kind: 'reply', status, head, body: method === 'HEAD' ? null : body };
}

/**
 * 301 to `location` (already encoded and same-origin), with the page express.static sends: the
 * location as escaped text, no link or script (the body is sent for HEAD too, as send does).
 * @param {string} location
 * @returns {import('./decision.js').Reply}
 */
export function redirectReply(location) {
  const doc = Buffer.from(htmlDocument('Redirecting', `Redirecting to ${escapeHtml(location)}`));
  const head = [
    'Content-Type', 'text/html; charset=UTF-8', 'Content-Length', String(doc.length),
    'Content-Security-Policy', "default-src 'none'", 'X-Content-Type-Options', 'nosniff', 'Location', location,
  ];
  return { kind: 'reply', status: 301, head, body: doc };
}

/**
 * 405 for a method other than GET and HEAD (with `fallthrough: false`): empty, with Allow.
 * @returns {import('./decision.js').Reply}
 */
export function methodNotAllowed() {
  return { kind: 'reply', status: 405, head: ['Allow', 'GET, HEAD', 'Content-Length', '0'], body: null };
}
