import { absPath, relInside } from '../../paths.js';
import { watchFailureText } from '../../errors.js';
import { createWatcher, pathsTouchedBy } from './file-events.js';

/**
 * @typedef {{
 *   opts: Readonly<import('../http/index.js').ServeOptions>,
 *   entries: import('./entries.js').Entries,
 *   dirs: Set<string>,
 *   reload: () => Promise<void>,
 * }} Watched  the part of a Site its watchers act on (read at each event: a reload replaces `entries`)
 */

/**
 * Start a Site's watchers: an event on a file forgets the entries it touches, one on the manifest reloads it.
 * @param {Watched} site
 */
export function watchSite(site) {
  /** @type {Set<string>} the failures said (by code): once each */
  const said = new Set();
  const watcher = createWatcher({
    manifest: site.opts.manifest,
    onFile: (abs) => forgetTouched(site, abs),
    onManifest: () => void site.reload().catch(() => {}),
    onFailure: (dir, err) => {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code ?? '';
      const warn = site.opts.onWarning;
      if (said.has(code) || warn === null) return;
      said.add(code);
      warn(`precompressor: ${watchFailureText(dir, err)}. The files of folders not watched are checked on disk ` +
        'on every request, never sent from memory; a manifest there is reloaded only by reload()');
    },
  });
  watcher.update(watchedDirs(site));
  return watcher;
}

/**
 * The folders to watch: every folder of the index, as absolute paths.
 * @param {Pick<Watched, 'opts' | 'dirs'>} site
 */
export function watchedDirs(site) {
  return [...site.dirs].map((d) => absPath(site.opts.root, d));
}

/**
 * A watcher event on `abs`: forget the entries it touches (the file itself, the original of a
 * variant or delta, or every file of a folder when the platform did not name the file).
 * @param {Watched} site
 * @param {string} abs
 */
function forgetTouched(site, abs) {
  const rel = relInside(site.opts.root, abs);
  const touched = rel === null ? [] : pathsTouchedBy(rel);
  if (typeof touched === 'string') site.entries.forgetFolder(touched);
  else for (const t of touched) site.entries.forget(t);
}
