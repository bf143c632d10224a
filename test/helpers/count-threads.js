// Loaded with `node --import` before a command under test: counts the worker threads the process
// starts (Node's `worker_threads` diagnostics channel) and prints `threads started: N` on stderr
// as it exits. An observation, not a stand-in: the command runs as it is.
import diagnostics from 'node:diagnostics_channel';
import { isMainThread } from 'node:worker_threads';

// threads inherit `--import`: only the main thread counts and prints
if (isMainThread) {
  let started = 0;
  diagnostics.subscribe('worker_threads', () => {
    started++;
  });
  process.on('exit', () => {
    process.stderr.write(`threads started: ${started}\n`);
  });
}
