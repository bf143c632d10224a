import { unconditional } from '../http/index.js';
import { needsMerge } from './respond.js';

/**
 * Repeated requests answered without deciding again: a request whose answer depends on nothing but
 * its target, its Accept-Encoding and the site gets the representation the slow path (core.js,
 * respond.js) chose for the same pair, whole, from memory (lib/serve/site/hot-reps.js keeps them).
 */

/**
 * Is `req` answered as every request with its (target, Accept-Encoding) is? GET or HEAD, no
 * precondition, Range or Available-Dictionary (a deploy delta's), nothing set on the response before
 * (status 200, none of the headers respond.js merges or the site dictionary's Link joins), no setHeaders
 * hook, not below a mount point (its Express `originalUrl` is its url: the Link depends on the URL).
 * @param {import('../site/index.js').Site} s
 * @param {import('../http/index.js').RequestInfo} req
 * @param {import('../http/index.js').ResponseHeaders} res
 */
function plain(s, req, res) {
  const m = req.method;
  if (m !== 'GET' && m !== 'HEAD') return false;
  const { originalUrl, headers } = req;
  const ae = headers['accept-encoding'];
  return s.opts.setHeaders === null && res.statusCode === 200 && (ae === undefined || typeof ae === 'string') &&
    (originalUrl === undefined || originalUrl === req.url) && unconditional(headers) &&
    headers['available-dictionary'] === undefined && !needsMerge(res, null) && !res.hasHeader('link');
}

/**
 * What was remembered for `req` (the representation and the head it was sent with), or null.
 * @param {import('../site/index.js').Site} s
 * @param {import('../http/index.js').RequestInfo} req
 * @param {import('../http/index.js').ResponseHeaders} res
 */
export function hotOf(s, req, res) {
  const { hot } = s;
  if (hot === null || req.url === undefined || !plain(s, req, res)) return null;
  return hot.get(s.entries, req.url, /** @type {string | undefined} */ (req.headers['accept-encoding']));
}

/**
 * Remember that `c`'s request was answered with `head` and the whole body of `rep`, the entry's own
 * representation whose body is held, when the next one like it may be: a plain request (above), an
 * entry the manifest keeps now.
 * @param {{ s: import('../site/index.js').Site, req: import('../http/index.js').RequestInfo,
 *   res: import('../http/index.js').ResponseHeaders }} c the request being decided (core.js's Call)
 * @param {import('../site/index.js').Entry} entry
 * @param {import('../site/index.js').Rep} rep
 * @param {string[]} head
 */
export function rememberHot(c, entry, rep, head) {
  const { s, req } = c;
  const { hot } = s;
  if (hot === null || req.url === undefined || rep.body === null || rep.size === 0 ||
    (rep !== entry.identity && rep !== entry.reps[rep.encoding]) || !plain(s, req, c.res) || !s.entries.holds(entry)) {
    return;
  }
  hot.set(s.entries, req.url, /** @type {string | undefined} */ (req.headers['accept-encoding']), entry, rep, head);
}
