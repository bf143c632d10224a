import Negotiator from 'negotiator';

/**
 * Content negotiation of Accept-Encoding (RFC 9110 §12.5.3), using the jshttp `negotiator`:
 * q-values (`q=0` refuses), `*` for codings not named, `identity` (acceptable unless refused by
 * `identity;q=0` or `*;q=0`), case-insensitive tokens, extra parameters tolerated. Among equal
 * q-values the server order wins (`preference`, then identity last). No header means identity.
 *
 * Results are cached per distinct header value and per set of available encodings (a bitmask),
 * so a request costs one Map lookup and one array index.
 */

/** Distinct header values kept before the cache is cleared (bounds memory under hostile input). */
export const CACHE_LIMIT = 1000;

/** Result when nothing the server has is acceptable (serveStatic then sends identity, as express.static). */
const NOT_ACCEPTABLE = null;

/**
 * @param {readonly string[]} preference server order, e.g. ['br', 'zstd', 'gzip']
 */
export function createNegotiator(preference) {
  const order = Object.freeze([...preference]);
  const slots = 1 << order.length;
  /** @type {Map<string, (string | null | undefined)[]>} */
  const cache = new Map();
  /** @type {(string | null | undefined)[]} */
  const noHeader = [];

  /**
   * The codings whose bit is set in `mask`, in server order, then identity.
   * @param {number} mask
   */
  function available(mask) {
    const list = [];
    for (let i = 0; i < order.length; i++) if (mask & (1 << i)) list.push(order[i]);
    list.push('identity');
    return list;
  }

  /**
   * @param {string | undefined} header
   * @param {number} mask
   */
  function compute(header, mask) {
    if (header === undefined) return 'identity';
    const list = available(mask);
    // negotiator 1.x takes `preferred`; its @types (0.6) do not know it yet
    const neg = /** @type {{ encodings(a: string[], o: { preferred: string[] }): string[] }} */ (
      /** @type {unknown} */ (new Negotiator({ headers: { 'accept-encoding': header } })));
    const chosen = neg.encodings(list, { preferred: list });
    return chosen.length > 0 ? chosen[0] : NOT_ACCEPTABLE;
  }

  /**
   * Choose the coding to send.
   * @param {string | string[] | undefined} header the request's Accept-Encoding
   * @param {number} mask bit i set when the file has a variant for `preference[i]`
   * @returns {string | null} an encoding name, 'identity', or null (nothing acceptable)
   */
  function negotiate(header, mask) {
    if (Array.isArray(header)) header = header.join(', ');
    let row;
    if (header === undefined) row = noHeader;
    else {
      row = cache.get(header);
      if (row === undefined) {
        if (cache.size >= CACHE_LIMIT) cache.clear();
        row = new Array(slots);
        cache.set(header, row);
      }
    }
    let choice = row[mask];
    if (choice === undefined) {
      choice = compute(header, mask);
      row[mask] = choice;
    }
    return choice;
  }

  /**
   * Bit mask of the encodings in `encodings` (names not in the server order are ignored).
   * @param {Iterable<string>} encodings
   */
  function maskOf(encodings) {
    let mask = 0;
    for (const e of encodings) {
      const i = order.indexOf(e);
      if (i !== -1) mask |= 1 << i;
    }
    return mask;
  }

  return { negotiate, maskOf, order, cacheSize: () => cache.size };
}

/**
 * Is this request a navigation, by its `Accept` header: does it name `text/html` (or XHTML) with
 * q > 0? Browsers send that for page loads (`text/html,application/xhtml+xml,…`) and not for
 * scripts, styles, images or `fetch()` (`*\/*`, `text/css,*\/*;q=0.1`, `image/avif,…`), so the SPA
 * fallback answers deep links and leaves missing assets a 404. A wildcard alone does not count.
 * @param {string | string[] | undefined} accept
 */
export function acceptsHtml(accept) {
  if (accept === undefined) return false;
  if (Array.isArray(accept)) accept = accept.join(', ');
  const types = new Negotiator({ headers: { accept } }).mediaTypes();
  return types.some((t) => {
    const type = t.toLowerCase();
    return type === 'text/html' || type === 'application/xhtml+xml';
  });
}
