// One error type for everything precompressor reports, with a stable `code` (ERR_PRECOMPRESSOR_OPTION,
// _DIR, _FILE, _MANIFEST, _ENCODING, _WATCH).
export class PrecompressorError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{ path?: string, cause?: unknown }} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'PrecompressorError';
    this.code = code;
    if (extra.path !== undefined) this.path = extra.path;
  }
}

/**
 * Human description of a value for error messages: `"abc" (string)`.
 * @param {unknown} value
 */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `${JSON.stringify(value)} (array)`;
  if (typeof value === 'string') return `"${value}" (string)`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object';
  return `${String(value)} (${typeof value})`;
}

/**
 * The one option-error template: option name, what was expected, what was given.
 * @param {string} name e.g. "options.concurrency"
 * @param {string} expected e.g. "a positive integer"
 * @param {unknown} got
 */
export function optionError(name, expected, got) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_OPTION', `Expected ${name} to be ${expected}, got ${describe(got)}`);
}

/**
 * An error as plain data, to cross to another thread or process.
 * @param {unknown} err
 * @returns {{ name?: string, code?: string, path?: string, message: string }}
 */
export function errorData(err) {
  const e = /** @type {any} */ (err);
  return { name: e?.name, code: e?.code, path: e?.path, message: e?.message ?? String(err) };
}

/**
 * The error errorData() described: a PrecompressorError keeps its class, code and path.
 * @param {{ name?: string, code?: string, path?: string, message: string }} e
 */
export function errorFromData(e) {
  if (e.name === 'PrecompressorError' && typeof e.code === 'string') {
    return new PrecompressorError(e.code, e.message, { path: e.path });
  }
  return Object.assign(new Error(e.message), e.code === undefined ? {} : { code: e.code });
}

/**
 * Why the folder `dir` could not be watched (`fs.watch` threw `err`), and what to do about it: the
 * system limit to raise, or the permission it needs (pure; the watch mode and the server say it).
 * @param {string} dir
 * @param {unknown} err
 */
export function watchFailureText(dir, err) {
  const code = /** @type {NodeJS.ErrnoException} */ (err)?.code;
  const head = `cannot watch ${dir}`;
  if (code === 'ENOSPC') {
    return `${head}: the system limit on watched folders is reached (ENOSPC; every process of this user counts): ` +
      'raise fs.inotify.max_user_watches (e.g. sysctl fs.inotify.max_user_watches=524288)';
  }
  if (code === 'EMFILE' || code === 'ENFILE') {
    return `${head}: too many open files or watchers (${code}): raise fs.inotify.max_user_instances on Linux, ` +
      'or the open-file limit (ulimit -n)';
  }
  if (code === 'EACCES' || code === 'EPERM') return `${head}: permission denied (${code}): let this user read it`;
  return `${head}: ${/** @type {Error} */ (err)?.message ?? String(err)}`;
}
