import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PrecompressorError } from '../../errors.js';
import { READ_NOFOLLOW } from '../../fs-atomic.js';

/**
 * Refusals before a run touches anything: a system or home folder to compress (a typo would write
 * variants across it), and a manifest path naming a file that is not our manifest.
 */

/** Folders refused with everything below them. */
const SYSTEM_TREES = ['/bin', '/boot', '/dev', '/etc', '/lib', '/lib32', '/lib64', '/libx32', '/proc', '/run', '/sbin',
  '/sys', '/usr', '/var/lib', '/var/log', '/var/cache', '/var/spool', '/var/mail', '/var/backups', '/var/db',
  '/System', '/Library', '/Applications', '/private/etc', '/private/var'];
/** Folders below a refused tree that web servers serve by default (nginx, Caddy, httpd images). */
const WEB_ROOTS_IN_TREES = ['/usr/share/nginx', '/usr/share/caddy', '/usr/local/apache2', '/usr/local/www',
  '/var/lib/nginx/html'];
/** Folders refused themselves only: what lies below them (a site in /var/www, /srv/x, /opt/app) is fine. */
const SYSTEM_FOLDERS = ['/var', '/opt', '/srv', '/mnt', '/media', '/home', '/Users', '/root', '/tmp', '/var/tmp',
  '/var/www', '/usr/local'];

// not isInside(): these are POSIX forms on every OS, compared with `/` whatever path.sep is
const within = (/** @type {string} */ dir, /** @type {string} */ top) =>
  dir === top || dir.startsWith(top.endsWith('/') ? top : `${top}/`);

/**
 * Why `dir` (an absolute POSIX path, symlinks resolved) must not be compressed without
 * `allowSystemDir`, or null (pure).
 * @param {string} dir
 * @param {string} home the user's home folder
 * @returns {string | null}
 */
export function systemDirReason(dir, home) {
  const d = dir.length > 1 ? dir.replace(/\/+$/, '') : dir;
  if (path.dirname(d) === d) return 'the root of the file system';
  if (home && d === home) return 'the home folder';
  if (home && within(home, d)) return 'a folder that holds the home folder';
  if (SYSTEM_FOLDERS.includes(d)) return 'a system folder';
  if (SYSTEM_TREES.some((t) => within(d, t)) && !WEB_ROOTS_IN_TREES.some((w) => within(d, w))) return 'a system folder';
  return null;
}

/**
 * Throw ERR_PRECOMPRESSOR_DIR when `root` (or the folder it resolves to) is a system or home folder.
 * @param {string} root absolute
 */
export function assertNotSystemDir(root) {
  const home = os.homedir();
  let real = root;
  try {
    real = fs.realpathSync(root);
  } catch {
    // missing: the walk reports it
  }
  for (const dir of new Set([root, real])) {
    const why = systemDirReason(dir.split(path.sep).join('/'), home.split(path.sep).join('/'));
    if (why === null) continue;
    const shown = dir === root ? root : `${root} (${dir})`;
    throw new PrecompressorError('ERR_PRECOMPRESSOR_DIR', `Refusing to compress ${shown}: it is ${why}, ` +
      'not a build output. Set options.allowSystemDir to compress it anyway', { path: root });
  }
}

/** What a non-regular file is, for messages. @param {fs.Stats} st */
function kindOf(st) {
  if (st.isSymbolicLink()) return 'a symlink';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** How every manifest we write begins (also one cut short): `{` then the "schema" key. */
const OUR_HEAD = /^\s*\{\s*"schema"\s*:/;

/**
 * Throw ERR_PRECOMPRESSOR_MANIFEST unless `file` is absent or a regular file that begins as our manifest.
 * @param {string} file absolute
 */
export function assertManifestTarget(file) {
  let st;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes(/** @type {any} */ (err).code)) return;
    const message = `Cannot read manifest ${file}: ${/** @type {Error} */ (err).message}`;
    throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST', message, { path: file, cause: err });
  }
  const refuse = (/** @type {string} */ what) => new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
    `Refusing to write the manifest over ${file}: it is ${what}, not a precompressor manifest. ` +
    'Remove it or choose another options.manifest', { path: file });
  if (!st.isFile()) throw refuse(kindOf(st));
  const head = Buffer.alloc(64);
  let n;
  try {
    const fd = fs.openSync(file, READ_NOFOLLOW);
    try {
      if (!fs.fstatSync(fd).isFile()) throw refuse('not a regular file');
      n = fs.readSync(fd, head, 0, head.length, 0);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if (err instanceof PrecompressorError) throw err;
    throw refuse(`unreadable (${/** @type {any} */ (err).code})`);
  }
  if (!OUR_HEAD.test(head.subarray(0, n).toString('utf8'))) throw refuse(n === 0 ? 'an empty file' : 'another file');
}
