import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { passWithLinks } from './pass-links.js';
import { ManifestRecords } from './manifest-records.js';
import { errorFromData } from '../../errors.js';

/**
 * Watch mode's whole pass (the first, and after events that cannot be trusted) in a child process
 * of its own: what a whole pass holds per file (walk entries, decisions, the manifest as objects)
 * is returned to the system when that process ends (a worker thread's is not: the allocator keeps
 * it), and the watcher keeps only the manifest's records. Options that cannot be sent (an
 * `onProgress` function) run it in this process instead.
 *
 * @typedef {{ report: import('../../types.js').Report, held: string[], records: ManifestRecords,
 *   links: Set<string> }} WholePass
 *   links: the symlinks to files the walk found (see batchPass())
 */

/**
 * @param {string} root
 * @param {object} options compressor options
 * @param {{ files: Map<string, unknown>, has(rel: string): boolean }} holdOut files still being written
 * @param {string} manifest absolute path of the manifest file
 * @returns {Promise<WholePass>}
 */
export async function wholePass(root, options, holdOut, manifest) {
  if (!sendable(options)) {
    const { report, held, manifest: m, links } = await passWithLinks(root, options, holdOut);
    return { report, held, records: await ManifestRecords.of(m, manifest), links: new Set(links) };
  }
  // env: as this process sees it now (CACHE_DIR decides the default cache folder)
  const child = fork(fileURLToPath(new URL('./whole-pass-child.js', import.meta.url)), [], {
    env: { ...process.env }, execArgv: childFlags(process.execArgv), serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    child.send({ root, options });
    const done = await new Promise((resolve, reject) => {
      child.on('message', (/** @type {any} */ msg) => {
        if (msg.type === 'hold?') child.send([...holdOut.files.keys()]);
        else if (msg.type === 'done') resolve(msg);
        else if (msg.type === 'failed') reject(errorFromData(msg.error));
      });
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        reject(new Error(`precompressor watch: the pass's process exited (${signal ?? code})`));
      });
    });
    /** @type {Map<string, string>} */
    const lines = new Map(done.rels.map((/** @type {string} */ rel, /** @type {number} */ i) => [rel, done.lines[i]]));
    const records = await ManifestRecords.stamped(done.head, lines, manifest);
    return { report: done.report, held: done.held, records, links: new Set(/** @type {string[]} */ (done.links)) };
  } finally {
    if (child.connected) child.disconnect(); // it exits then (also when this pass is abandoned)
  }
}

/** Node flags the pass's process keeps: memory and feature flags, not `-e`, `--inspect` or `--test`. */
const KEPT_FLAGS = new RegExp('^--(?:max-old-space-size|max-semi-space-size|stack-size|experimental-|' +
  'no-experimental-|no-warnings|disable-warning|enable-source-maps|expose-gc)');

/**
 * The flags of this process that its whole pass's process gets (pure).
 * @param {readonly string[]} execArgv
 */
export function childFlags(execArgv) {
  return execArgv.filter((flag) => KEPT_FLAGS.test(flag));
}

/** @param {object} options */
function sendable(options) {
  try {
    structuredClone(options);
    return true;
  } catch {
    return false;
  }
}
