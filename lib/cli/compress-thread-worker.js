import { once } from 'node:events';
import { parentPort } from 'node:worker_threads';
import { precompressWhole } from '../compress/index.js';
import { errorData } from '../errors.js';
import { collector, paceCollections } from '../util/heap-pace.js';

/**
 * The pass thread of compress-thread.js: its modules load as it starts; then one whole pass (the
 * warm run was tried before), given by the first message, its progress, and its report or error.
 */
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const [{ dir, options, progress, changes }] =
  /** @type {[{ dir: string, options: object, progress: boolean, changes: boolean }]} */ (await once(port, 'message'));
const onProgress = progress
  ? (/** @type {unknown} */ p) => port.postMessage({ type: 'progress', progress: p })
  : undefined;
const stopPacing = paceCollections(collector({ expose: true }));
try {
  const report = await precompressWhole(dir, { ...options, onProgress });
  port.postMessage({ type: 'done', report: changes ? report : { ...report, changes: [] } });
} catch (err) {
  port.postMessage({ type: 'failed', error: errorData(err) });
} finally {
  stopPacing();
}
