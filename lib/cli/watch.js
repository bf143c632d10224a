import { watch } from '../watch/index.js';
import { printable } from '../util/format.js';
import { singleFlight } from '../util/flow.js';
import { afterBuild } from './config.js';

/**
 * `precompressor <dir> --watch`: one line per file a batch changed, and every error. A signal closes
 * it after the batch in flight (the manifest then matches the files); a second exits at once.
 */

/** @type {Record<string, string>} */
const WORDS = {
  compress: 'compressed', 'from cache': 'from cache', 'remove (orphan)': 'removed (source gone)',
  'remove (stale)': 'removed (no longer compressed)', 'remove (failed)': 'removed (failed)',
  'remove (temp)': 'removed (temp file)',
};

/**
 * What happened to one file, in words.
 * @param {{ path: string, action: string, skipped?: string }} c
 */
function changeText(c) {
  if ((c.action === 'compress' || c.action === 'from cache') && c.skipped === 'not-smaller') {
    return `${printable(c.path)}: no variant, compressed output not smaller`;
  }
  return `${WORDS[c.action] ?? c.action} ${printable(c.path)}`;
}

/** Local HH:MM:SS, for log lines. */
function clock(d = new Date()) {
  return d.toTimeString().slice(0, 8);
}

/**
 * The lines a batch prints (pure). Changes go to stdout unless quiet; failures always to stderr.
 * @param {{ changes: { path: string, action: string, skipped?: string }[],
 *   failures: { path: string, message: string }[], warnings: { path: string, message: string }[] }} batch
 * @param {{ quiet?: boolean, time?: string, warned?: Set<string> }} [o] `warned`: warnings already printed
 *   (each is printed once, not again in every batch that finds it again)
 * @returns {{ out: string[], err: string[] }}
 */
export function batchLines(batch, o = {}) {
  const t = o.time ?? clock();
  const out = o.quiet ? [] : batch.changes.map((c) => `${t} ${changeText(c)}`);
  const err = batch.failures.map((f) => `${t} error: ${printable(f.path)}: ${printable(f.message)}`);
  for (const w of o.quiet ? [] : batch.warnings) {
    const key = `${w.path}\0${w.message}`;
    if (o.warned?.has(key)) continue;
    o.warned?.add(key);
    err.push(`${t} warning: ${printable(w.path)}: ${printable(w.message)}`);
  }
  return { out, err };
}

/**
 * Run watch mode until SIGINT/SIGTERM. Exit code: 0 after a clean stop, 2 when the watcher cannot
 * start, 1 when a folder made since cannot be watched.
 * @param {string} dir
 * @param {object} apiOptions compressor options (and watch options: debounce, awaitWriteFinish, usePolling)
 * @param {{ quiet?: boolean, stdout?: { write(s: string): unknown }, stderr?: { write(s: string): unknown },
 *   signals?: NodeJS.EventEmitter }} [io] `signals` defaults to `process` (tests pass their own emitter)
 * @returns {Promise<number>}
 */
export async function watchCommand(dir, apiOptions, io = {}) {
  const quiet = !!io.quiet;
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const signals = io.signals ?? process;
  let watcher;
  try {
    watcher = watch(dir, apiOptions);
  } catch (err) {
    stderr.write(`precompressor: ${printable(/** @type {Error} */ (err).message)}\n`);
    return 2;
  }
  const warned = new Set();
  // --server-config: the servers' files follow each batch that changed something (one write at a time)
  const serverConfig = /** @type {{ serverConfig?: string | null }} */ (apiOptions).serverConfig ?? null;
  const configs = singleFlight(() => afterBuild(dir, { ...apiOptions, serverConfig }).then((files) => {
    if (quiet || files.length === 0) return;
    stdout.write(`${clock()} server configuration written to ${printable(String(serverConfig))}\n`);
  }, (err) => void stderr.write(`${clock()} error: ${printable(err.message)}\n`)));
  watcher.on('batch', (batch) => {
    const { out, err } = batchLines(batch, { quiet, warned });
    for (const l of out) stdout.write(l + '\n');
    for (const l of err) stderr.write(l + '\n');
    if (serverConfig !== null && batch.changes.length > 0) configs.run();
  });

  return new Promise((resolve) => {
    let stopping = false;
    watcher.on('error', (err) => {
      stderr.write(`${clock()} error: ${printable(err.message)}\n`);
      // a folder that cannot be watched: its changes would be missed, silently
      if (/** @type {{ code?: string }} */ (err).code === 'ERR_PRECOMPRESSOR_WATCH' && !stopping) {
        stopping = true;
        watcher.close().finally(() => finish(1));
      }
    });
    const onSignal = (/** @type {string} */ name) => {
      if (stopping) {
        stderr.write(`precompressor: ${name} again, exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      if (!quiet) stderr.write(`precompressor: ${name}, finishing the current batch...\n`);
      watcher.close().then(() => finish(0), (err) => {
        stderr.write(`precompressor: ${printable(err.message)}\n`);
        finish(1);
      });
    };
    /** @type {[string, () => void][]} */
    const handlers = ['SIGINT', 'SIGTERM'].map((name) => [name, () => onSignal(name)]);
    for (const [name, h] of handlers) signals.on(name, h);
    const finish = (/** @type {number} */ code) => {
      for (const [name, h] of handlers) signals.off(name, h);
      configs.idle().then(() => resolve(code));
    };
    watcher.ready.then(
      () => {
        if (!quiet && !stopping) stdout.write(`precompressor: watching ${printable(watcher.root)} (Ctrl-C to stop)\n`);
      },
      (err) => {
        stderr.write(`precompressor: ${printable(err.message)}\n`);
        stopping = true;
        watcher.close().finally(() => finish(2));
      },
    );
  });
}
