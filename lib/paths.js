import path from 'node:path';

/**
 * POSIX path of `abs` relative to `root`, or null when `abs` is `root` itself or outside it.
 * (`..foo` is a name inside the folder; only `..` and `../…` leave it.)
 * @param {string} root
 * @param {string} abs
 * @returns {string | null}
 */
export function relInside(root, abs) {
  const rel = path.relative(root, abs);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join('/');
}
