import { once } from 'node:events';
import { passWithLinks } from './pass-links.js';
import { errorData } from '../../errors.js';

/**
 * The child process of lib/watch/passes/whole-pass.js: one whole pass, then the manifest as one JSON
 * string per file and the report, sent back. The files held (still being written) are asked for
 * once the folder is walked, when a pass in the watcher's process would read them. Signals are
 * the watcher's to act on (it waits for this pass).
 */
const send = (/** @type {unknown} */ msg) => /** @type {NonNullable<typeof process.send>} */ (process.send)(msg);
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) process.on(signal, () => {});
// The watcher disconnects once it has the result, or when it gives up on this pass.
process.on('disconnect', () => process.exit(0));
const [start] = /** @type {[{ root: string, options: object }]} */ (await once(process, 'message'));
/** @type {Set<string>} */
let hold = new Set();
const afterWalk = async () => {
  send({ type: 'hold?' });
  const [paths] = await once(process, 'message');
  hold = new Set(/** @type {string[]} */ (paths));
};
try {
  const holdOut = { has: (/** @type {string} */ rel) => hold.has(rel) };
  const { report, held, manifest, links } = await passWithLinks(start.root, start.options, holdOut, { afterWalk });
  const { files, ...head } = manifest;
  const rels = Object.keys(files);
  const lines = rels.map((rel) => JSON.stringify(files[rel]));
  send({ type: 'done', report, held, head, rels, lines, links });
} catch (err) {
  send({ type: 'failed', error: errorData(err) });
}
