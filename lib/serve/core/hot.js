import { unconditional } from '../http/index.js';
import { needsMerge } from './respond.js';

/**
 * Repeated requests answered without deciding again: a request whose answer depends on nothing but
 * its target, its Accept-Encoding and the site gets the representation the slow path (core.js,
 * respond.js) chose for the same pair, whole, from memory (lib/serve/site/hot-reps.js keeps them).
 */

/**
 * Is `req` answered as every request with its (target, Accept-Encoding) is? GET or HEAD, no
 * precondition or Range, nothing set on the response before (status 200, none of the headers
 * respond.js merges), no setHeaders hook, not below a mount point (its Express `originalUrl` is its
 * url: the site dictionary's Link depends on the URL); and sameFor() its entry.
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
    (originalUrl === undefined || originalUrl === req.url) && unconditional(headers) && !needsMerge(res, null);
}

/**
 * What only some entries' answers depend on: an entry with deploy deltas, the request's
 * Available-Dictionary; a page that links the site dictionary, a Link set before (it joins ours).
 * @param {import('../site/index.js').Entry} entry
 * @param {import('../http/index.js').RequestInfo} req
 * @param {import('../http/index.js').ResponseHeaders} res
 */
function sameFor(entry, req, res) {
  return (entry.deltas === null || req.headers['available-dictionary'] === undefined) &&
    (entry.link === null || !res.hasHeader('link'));
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
  const h = hot.get(s.entries, req.url, /** @type {string | undefined} */ (req.headers['accept-encoding']));
  return h !== null && sameFor(h.entry, req, res) ? h : null;
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
  const own = rep === entry.identity || rep === entry.reps[rep.encoding];
  if (hot === null || req.url === undefined || rep.body === null || rep.size === 0 || !own ||
    !plain(s, req, c.res) || !sameFor(entry, req, c.res) || !s.entries.holds(entry)) return;
  hot.set(s.entries, req.url, /** @type {string | undefined} */ (req.headers['accept-encoding']), entry, rep, head);
}
