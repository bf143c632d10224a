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
 * respond.js merges), no setHeaders hook, not below a mount point (its Express `originalUrl` is its url).
 * @param {import('../site/index.js').Site} s
 * @param {import('../http/index.js').RequestInfo} req
 * @param {import('../http/index.js').ResponseHeaders} res
 */
function plain(s, req, res) {
  const m = req.method;
  if (m !== 'GET' && m !== 'HEAD') return false;
  const { originalUrl } = req;
  const ae = req.headers['accept-encoding'];
  return s.opts.setHeaders === null && res.statusCode === 200 && (ae === undefined || typeof ae === 'string') &&
    (originalUrl === undefined || originalUrl === req.url) && unconditional(req.headers) && !needsMerge(res, null);
}

/**
 * The representation remembered for `req`, to be sent whole with its `head` (none for HEAD), or null.
 * @param {import('../site/index.js').Site} s
 * @param {import('../http/index.js').RequestInfo} req
 * @param {import('../http/index.js').ResponseHeaders} res
 * @returns {import('../site/index.js').Rep | null}
 */
export function hotRep(s, req, res) {
  const { hot } = s;
  if (hot === null || req.url === undefined || !plain(s, req, res)) return null;
  return hot.get(s.entries, req.url, /** @type {string | undefined} */ (req.headers['accept-encoding']));
}

/**
 * Remember that `c`'s request is answered with `rep` of `entry` from memory, when the next one like it
 * may be: a plain request (above), an entry kept by the manifest now, no deploy delta or site
 * dictionary Link (they depend on other headers and on the URL), a body held.
 * @param {{ s: import('../site/index.js').Site, req: import('../http/index.js').RequestInfo,
 *   res: import('../http/index.js').ResponseHeaders }} c the request being decided (core.js's Call)
 * @param {import('../site/index.js').Entry} entry
 * @param {import('../site/index.js').Rep} rep
 */
export function rememberHot(c, entry, rep) {
  const { s, req } = c;
  const { hot } = s;
  if (hot === null || req.url === undefined || entry.deltas !== null || entry.link !== null || rep.body === null ||
    rep.size === 0 || !plain(s, req, c.res) || !s.entries.holds(entry)) return;
  hot.set(s.entries, req.url, /** @type {string | undefined} */ (req.headers['accept-encoding']), entry, rep);
}
