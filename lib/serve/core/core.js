import fs from 'node:fs';
import { parseRequestPath, folderRedirectLocation, splitUrl } from '../http/index.js';
import { resolveEntry, statRep, contentTypeOf, appendVary } from '../site/index.js';
import { acceptsHtml } from '../http/index.js';
import { respond } from './respond.js';
import { rememberHot } from './hot.js';
import { chooseDelta } from '../site/index.js';
import { redirectReply, methodNotAllowed, statusReply } from '../http/index.js';
import { OPEN_FLAGS, realOf } from '../bodies/index.js';
import { absPath } from '../../paths.js';

/**
 * The serving core: a request described plainly in, one decision out (a reply, "not ours", an error).
 * It opens and checks the files it answers with; writing is the adapters'.
 */

/**
 * @typedef {import('../http/index.js').RequestInfo} RequestInfo
 * @typedef {import('../http/index.js').ResponseHeaders} ResponseHeaders
 */

/**
 * @template [X=any]
 * @template {RequestInfo} [Q=RequestInfo]
 * @template {ResponseHeaders} [R=ResponseHeaders]
 * @typedef {{
 *   s: import('../site/index.js').Site, req: Q, res: R, gone(res: R): boolean, x: X,
 *   done(d: import('../http/index.js').Decision, c: Call<X, Q, R>): void, p: import('../http/index.js').PathOk | null,
 * }} Call  gone: whether the client went away; done: takes the decision (once); x: the adapter's own
 *   (node: next); p: the request's path, once parsed (the site dictionary's Link is relative to it)
 */

// ENXIO: a socket planted where a file was
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR', 'ENXIO']);

/**
 * Decide `c` and hand the decision to `c.done`: at once for bodies in memory, later when a file
 * is opened or a path first checked.
 * @param {Call} c
 */
export function decide(c) {
  const { s, req } = c;
  const { opts } = s;
  if (req.method !== 'GET' && req.method !== 'HEAD') return c.done({ kind: 'method', reply: methodNotAllowed() }, c);
  const p = parseRequestPath(req.url ?? '/', s.pathOptions);
  if (!p.ok) return pass(c, p.status);
  // the mount point of a mounted middleware asked without its slash (`/docs` for app.use('/docs')):
  // Express gives us `/`; like express.static, answer as for a folder without its slash
  if (p.rel === '' && req.originalUrl !== undefined && !splitUrl(req.originalUrl).pathname.endsWith('/')) {
    p.slash = false;
  }
  if (p.dotfile && opts.dotfiles !== 'allow') return pass(c, opts.dotfiles === 'deny' ? 403 : 404);
  c.p = p;
  serveResolved(c, p, 2 + opts.extensions.length); // the path, then each extension, then a folder's redirect
}

/**
 * Serve what `p` resolves to; a listed file found missing at its first check is resolved again, as
 * later requests will, at most `left` times.
 * @param {Call} c
 * @param {import('../http/index.js').PathOk} p
 * @param {number} left
 */
function serveResolved(c, p, left) {
  const hit = resolveEntry(c.s, p, c.s.opts);
  if (hit === null) return miss(c, p);
  if ('redirect' in hit) return redirect(c);
  if (!(hit.entry instanceof Promise)) return serveEntry(c, hit.entry);
  hit.entry.then((entry) => {
    if (entry !== null) serveEntry(c, entry);
    else if (left > 1) serveResolved(c, p, left - 1);
    else miss(c, p);
  }, (err) => fail(c, err));
}

/**
 * A path the manifest does not list (or whose file is missing): unlisted files, the SPA shell, or pass.
 * @param {Call} c
 * @param {import('../http/index.js').PathOk} p
 */
function miss(c, p) {
  // Never passed on: a framework's static handler behind this one would send the manifest as a file.
  if (p.rel === c.s.manifestRel) return c.done(statusReply(404, c.req.method ?? 'GET'), c);
  if (!c.s.opts.unlisted) return spaOrPass(c);
  serveUnlisted(c, p);
}

/**
 * Not ours: the app goes on (fallthrough), or `status` (404, 400, 403) reaches it as an error.
 * @param {Call} c
 * @param {number} status
 * @param {Error} [cause] the system error of a miss (ENOENT, ENAMETOOLONG), as express.static gives it
 */
function pass(c, status, cause) {
  c.done(cause === undefined ? { kind: 'pass', status } : { kind: 'pass', status, cause }, c);
}

/**
 * A system error (EACCES, EMFILE, ...): a 500 even with fallthrough, as express.static.
 * @param {Call} c
 * @param {Error} error
 */
function fail(c, error) {
  c.done({ kind: 'error', error }, c);
}

/**
 * Open `file` (no final symlink, no FIFO wait), fstat it, and answer with `repOf(stat)` through that
 * descriptor, so the headers describe the bytes sent. With `checkReal` (files served by path) its real
 * path must be servable too: a folder swapped for a symlink sends nothing. `onMissing(err)` when it
 * is not to be sent; the descriptor is closed unless a reply streams it.
 * @param {Call} c
 * @param {{ path: string, vary: boolean }} target
 * @param {string} file
 * @param {(st: fs.Stats) => import('../site/index.js').Rep | null} repOf
 * @param {(err?: Error | null) => void} onMissing
 * @param {boolean} checkReal
 * @param {((fd: number, st: fs.Stats) => void) | null} [instead] takes over a descriptor whose rep passed
 *   (and closes it)
 */
function openAndRespond(c, target, file, repOf, onMissing, checkReal, instead = null) {
  fs.open(file, OPEN_FLAGS, (err, fd) => {
    if (err) return GONE.has(/** @type {string} */ (err.code)) ? onMissing() : fail(c, err);
    const drop = (/** @type {Error | null} */ e) => {
      fs.close(fd, () => {});
      if (c.gone(c.res)) c.done({ kind: 'gone' }, c);
      else onMissing(e);
    };
    const send = (/** @type {fs.Stats} */ st) => {
      const rep = c.gone(c.res) ? null : repOf(st);
      if (rep === null) return drop(null);
      if (instead !== null) return instead(fd, st);
      answer(c, target, rep, fd, st);
    };
    fs.fstat(fd, (err2, st) => {
      if (err2 || !st.isFile()) return drop(err2);
      if (!checkReal) return send(st);
      realOf(fd, file, st, (real) => {
        if (real === null) return drop(null);
        c.s.unlisted.allows(real).then((ok) => (ok ? send(st) : drop(null)), drop);
      });
    });
  });
}

/**
 * Decide the reply of `rep` (lib/serve/core/respond.js); a throwing `setHeaders` is a 500.
 * @param {Call} c
 * @param {import('../site/index.js').Entry | Parameters<typeof respond>[1]} entry a listed path's, or
 *   the target of a file served by path
 * @param {import('../site/index.js').Rep} rep
 * @param {number | null} fd
 * @param {fs.Stats} [st]
 */
function answer(c, entry, rep, fd, st) {
  let d;
  try {
    d = respond(c, entry, rep, fd, st);
  } catch (e) {
    if (fd !== null) fs.close(fd, () => {});
    return fail(c, /** @type {Error} */ (e));
  }
  // the whole body from memory: the next request like this one is answered as this one (hot.js)
  if (d.kind === 'reply' && d.status === 200 && d.body === rep.body && fd === null && 'reps' in entry) {
    rememberHot(c, entry, rep, d.head);
  }
  c.done(d, c);
}

/**
 * @param {Call} c
 * @param {{ file: string, path: string, type: string, vary: boolean }} target
 * @param {() => void} onMissing
 */
function serveFromDisk(c, target, onMissing) {
  const repOf = (/** @type {fs.Stats} */ st) => statRep(target.file, target.type, target.vary, st, c.s.opts);
  openAndRespond(c, target, target.file, repOf, (err) => (err ? fail(c, err) : onMissing()), true);
}

/**
 * A path's entry: stale → from disk; else the negotiated representation, from memory or streamed.
 * @param {Call} c
 * @param {import('../site/index.js').Entry} entry
 */
function serveEntry(c, entry) {
  const { s, req } = c;
  if (entry.stale) {
    const target = { file: entry.identity.file, path: entry.path, type: entry.type, vary: entry.vary };
    return serveFromDisk(c, target, () => pass(c, 404));
  }
  // nothing acceptable (identity refused too): identity all the same, as express.static and
  // RFC 9110 §12.5.3 allow, rather than a 406
  const delta = entry.deltas === null ? null : chooseDelta(req.headers, entry.deltas);
  const choice = delta?.encoding ?? s.neg.negotiate(req.headers['accept-encoding'], entry.mask) ?? 'identity';
  const rep = delta ?? (choice === 'identity' ? entry.identity : entry.reps[choice]);
  if (rep.body !== null) {
    rep.used = true;
    return answer(c, entry, rep, null);
  }
  // the very file its check saw (dev/ino): not another one reached through a folder swapped for a symlink
  const unchanged = (/** @type {fs.Stats} */ st) => st.ino === rep.ino && st.dev === rep.dev && st.size === rep.size &&
    (rep.encoding !== 'identity' || st.mtimeMs === rep.mtimeMs);
  // a body up to memoryFileLimit is held once read, when its entry is kept: else streamed, never read whole
  const fill = rep.size <= s.opts.memoryFileLimit && s.bodies.fits(rep.size) && delta === null &&
    s.entries.holds(entry);
  openAndRespond(c, entry, rep.file, (st) => (unchanged(st) ? rep : null), () => {
    s.markStale(entry);
    serveEntry(c, entry);
  }, false, fill ? (fd, st) => fillAndRespond(c, entry, rep, fd, st) : null);
}

/**
 * Read a body through its checked descriptor into the body cache, and answer from it.
 * @param {Call} c
 * @param {import('../site/index.js').Entry} entry
 * @param {import('../site/index.js').Rep} rep
 * @param {number} fd
 * @param {fs.Stats} st
 */
function fillAndRespond(c, entry, rep, fd, st) {
  const { s } = c;
  s.fill(entry, rep, fd, st).finally(() => fs.close(fd, () => {})).then((body) => {
    if (c.gone(c.res)) return c.done({ kind: 'gone' }, c);
    if (body === null) {
      s.markStale(entry);
      return serveEntry(c, entry);
    }
    answer(c, entry, rep.body === body ? rep : { ...rep, body }, null, st);
  }, (err) => fail(c, err));
}

/**
 * The trailing-slash redirect of a folder, from the original URL (mount prefix and query kept).
 * @param {Call} c
 */
function redirect(c) {
  const { req } = c;
  c.done(redirectReply(folderRedirectLocation(req.originalUrl ?? req.url ?? '/')), c);
}

/**
 * A miss: the SPA shell for a path whose last segment has no `.`, else pass.
 * @param {Call} c
 */
function spaOrPass(c) {
  const { opts } = c.s;
  if (opts.spa !== null) {
    c.res.setHeader('Vary', appendVary(c.res.getHeader('vary'), 'Accept')); // the answer depends on Accept
    if (!acceptsHtml(c.req.headers.accept)) return pass(c, 404);
    const entry = c.s.find(opts.spa);
    if (!(entry instanceof Promise)) return spaShell(c, entry);
    entry.then((e) => spaShell(c, e ?? undefined), (err) => fail(c, err));
    return;
  }
  pass(c, 404);
}

/**
 * The SPA shell: its entry, else (with `unlisted`) the file on disk, else 404.
 * @param {Call} c
 * @param {import('../site/index.js').Entry | undefined} entry
 */
function spaShell(c, entry) {
  const { opts } = c.s;
  if (entry) return serveEntry(c, entry);
  if (opts.unlisted && opts.spa !== null) {
    const file = absPath(opts.root, opts.spa);
    return serveFromDisk(c, { file, path: file, type: contentTypeOf(opts.spa), vary: false }, () => pass(c, 404));
  }
  pass(c, 404);
}

/**
 * A miss on disk: with `fallthrough: false`, the 404 carries the system error express.static's stat gives.
 * @param {Call} c
 * @param {import('../http/index.js').PathOk} p
 */
function unlistedMiss(c, p) {
  if (c.s.opts.fallthrough || c.s.opts.spa !== null) return spaOrPass(c);
  c.s.unlisted.missCause(p).then((cause) => pass(c, 404, cause), (err) => fail(c, err));
}

/**
 * A path the table does not have, with `unlisted`: stat-based lookup on disk.
 * @param {Call} c
 * @param {import('../http/index.js').PathOk} p
 */
function serveUnlisted(c, p) {
  c.s.unlisted.find(p).then((f) => {
    if (f === null) return unlistedMiss(c, p);
    if ('redirect' in f) return redirect(c);
    const target = { file: f.real, path: f.logical, type: contentTypeOf(f.rel), vary: false };
    serveFromDisk(c, target, () => spaOrPass(c));
  }, (err) => fail(c, err));
}
