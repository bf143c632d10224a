import createError from 'http-errors';

/**
 * The answers serveStatic gives without a file, shaped as express.static (serve-static + send)
 * gives them, so that swapping one for the other changes nothing a client or an error handler
 * sees: errors for `next(err)` are `http-errors` objects (NotFoundError, ForbiddenError, ... with
 * status, statusCode and expose), the folder redirect is send's small HTML page, and 405 is empty.
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
 * 301 to `location` (already encoded and same-origin), with the page express.static sends: the
 * location as escaped text, no link or script; headers set on `res` like send, so that headers of
 * earlier middleware stay.
 * @param {import('node:http').ServerResponse} res
 * @param {string} location
 */
export function redirectReply(res, location) {
  const doc = htmlDocument('Redirecting', `Redirecting to ${escapeHtml(location)}`);
  res.statusCode = 301;
  res.setHeader('Content-Type', 'text/html; charset=UTF-8');
  res.setHeader('Content-Length', Buffer.byteLength(doc));
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Location', location);
  res.end(doc);
}

/**
 * 405 for a method other than GET and HEAD (with `fallthrough: false`): empty, with Allow.
 * @param {import('node:http').ServerResponse} res
 */
export function methodNotAllowed(res) {
  res.statusCode = 405;
  res.setHeader('Allow', 'GET, HEAD');
  res.setHeader('Content-Length', '0');
  res.end();
}
