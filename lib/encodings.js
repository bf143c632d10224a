/**
 * The encodings a variant can have, best first (the server's default preference, and the order of
 * the compressor's `encodings`): the Content-Encoding token and the suffix of the variant's file.
 * @typedef {'br' | 'zstd' | 'gzip'} Encoding
 * @type {readonly Readonly<{ name: Encoding, suffix: string }>[]}
 */
export const ENCODINGS = Object.freeze([
  Object.freeze({ name: 'br', suffix: '.br' }),
  Object.freeze({ name: 'zstd', suffix: '.zst' }),
  Object.freeze({ name: 'gzip', suffix: '.gz' }),
]);

/** The names, best first. */
export const ENCODING_NAMES = Object.freeze(ENCODINGS.map((e) => e.name));

const SUFFIX = new Map(ENCODINGS.map((e) => [e.name, e.suffix]));
const BY_SUFFIX = new Map(ENCODINGS.map((e) => [e.suffix, e.name]));

/**
 * @param {unknown} name
 * @returns {name is Encoding}
 */
export function isEncoding(name) {
  return SUFFIX.has(/** @type {Encoding} */ (name));
}

/**
 * The suffix of `encoding`'s variant files (`.br`, `.zst`, `.gz`).
 * @param {string} encoding
 */
export function suffixOf(encoding) {
  return /** @type {string} */ (SUFFIX.get(/** @type {Encoding} */ (encoding)));
}

/**
 * Path of the variant file of `file` (POSIX relative to root, or absolute) for `encoding`: `<file><suffix>`.
 * @param {string} file
 * @param {string} encoding
 */
export function variantPath(file, encoding) {
  return file + suffixOf(encoding);
}

/**
 * The encoding whose suffix (`.br`, `.gz`, `.zst`) ends the path, if any.
 * @param {string} rel
 * @returns {Encoding | undefined}
 */
export function suffixEncoding(rel) {
  const dot = rel.lastIndexOf('.');
  if (dot <= rel.lastIndexOf('/')) return undefined;
  return BY_SUFFIX.get(rel.slice(dot));
}

/**
 * `rel` without the suffix of `encoding` (the variant's source path).
 * @param {string} rel
 * @param {string} encoding
 */
export function stemOf(rel, encoding) {
  return rel.slice(0, -suffixOf(encoding).length);
}
