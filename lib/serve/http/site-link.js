import encodeUrl from 'encodeurl';
import { splitUrl } from './request-path.js';

/**
 * The `Link` header that names the site dictionary (RFC 9842) on an HTML response, so that the
 * browser fetches it at idle time. It is added per response in one place, `linkedHead()`: the
 * entries' precomputed heads never carry it, as one page is answered at many URLs (its own, an SPA
 * deep URL, a mount's URL). The reference is relative to the URL answered, not an absolute path,
 * so it holds behind a proxy that strips a prefix the server never sees.
 */

/** URL depths whose Link values, and header arrays per representation, are kept; deeper ones are built per response. */
const KEPT_DEPTHS = 8;

/**
 * Where the URL of a request is below the folder's root: `up` folders (one `../` each), or `into`
 * the mount's own folder for the mount's URL asked without its slash (`/app` for
 * `app.use('/app', ...)`, whose path here is '' without a slash, lib/serve/adapters/middleware.js).
 * @param {{ rel: string, slash: boolean }} p the parsed request path (lib/serve/http/request-path.js)
 * @param {string | undefined} originalUrl Express's URL before a mount removed its prefix
 * @returns {{ up: number, into: string }}
 */
export function placeOf(p, originalUrl) {
  const { rel, slash } = p;
  if (rel === '') {
    if (slash || originalUrl === undefined) return { up: 0, into: '' };
    const whole = splitUrl(originalUrl).pathname;
    return { up: 0, into: `${encodeUrl(whole.slice(whole.lastIndexOf('/') + 1))}/` };
  }
  let up = slash ? 1 : 0;
  for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) up++;
  return { up, into: '' };
}

/** The site dictionary of one manifest, and its Link values by depth. */
export class SiteLink {
  /** @type {string[]} by depth, for depths below KEPT_DEPTHS */
  values = [];

  /** @param {string} dictionary the site dictionary's path, relative to the root */
  constructor(dictionary) {
    this.href = dictionary.split('/').map(encodeURIComponent).join('/');
  }

  /**
   * The Link value for a URL at `place`.
   * @param {{ up: number, into: string }} place
   */
  value({ up, into }) {
    const kept = into === '' && up < KEPT_DEPTHS ? this.values[up] : undefined;
    if (kept !== undefined) return kept;
    const base = up > 0 ? '../'.repeat(up) : `./${into}`;
    const value = `<${base}${this.href}>; rel="compression-dictionary"`;
    if (into === '' && up < KEPT_DEPTHS) this.values[up] = value;
    return value;
  }
}

/**
 * The 200 header array of a response with the Link added. Built once per representation and
 * depth (`rep.linked`) when the head is the representation's own; built for this response when
 * it was merged with headers set before, or a Link was set before (setHeaders, an earlier
 * middleware): ours joins it, as writeHead() would otherwise replace it.
 * @param {string[]} head the head chosen for this response (the representation's own, or merged)
 * @param {{ head: string[], linked: string[][] | null }} rep
 * @param {SiteLink} link
 * @param {{ up: number, into: string }} place
 * @param {import('./decision.js').ResponseHeaders} res
 */
export function linkedHead(head, rep, link, place, res) {
  const before = res.getHeader('link');
  const own = head === rep.head && before === undefined && place.into === '' && place.up < KEPT_DEPTHS;
  if (own) {
    const kept = rep.linked?.[place.up];
    if (kept !== undefined) return kept;
  }
  const value = link.value(place);
  const joined = before === undefined ? value : `${[before].flat().join(', ')}, ${value}`;
  const out = [...head, 'Link', joined];
  if (own) (rep.linked ??= [])[place.up] = out;
  return out;
}
