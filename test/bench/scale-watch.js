// Watch mode in the scale benchmark, in its own process:
//   node test/bench/scale-watch.js <root> <repo root> <cache dir> <file to change>
// Measures the time from watch() to `ready` (the watcher listening, its first pass done: a warm
// run on an unchanged tree), the RSS then, and the time from changing one file to the end of the
// batch that compresses it, with the peak RSS during that batch and the RSS after it. Prints one
// JSON line (`whole`: the batch was a whole pass; absent before batches could be anything else;
// `childPeakMB`: the peak RSS of the whole pass's child process, sampled every 50 ms, Linux only).

import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';

const [root, repoRoot, cacheDir, file] = process.argv.slice(2);
const { watch } = await import(pathToFileURL(path.join(repoRoot, 'lib/index.js')).href);
const rss = () => process.memoryUsage().rss / 2 ** 20;
/** The peak RSS (VmHWM) of this process's child processes (the whole pass's), in MB; Linux only. */
function childPeakMB() {
  let most = 0;
  try {
    const kids = fs.readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    for (const pid of kids) {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (hwm) most = Math.max(most, Number(hwm[1]) / 1024);
    }
  } catch {
    // not Linux, or the child ended between the two reads
  }
  return most;
}
let peak = 0;
let childPeak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, rss());
  childPeak = Math.max(childPeak, childPeakMB());
}, 50);
const t0 = performance.now();
const w = watch(root, { cacheDir });
await w.ready;
const readyMs = performance.now() - t0;
const rssReadyMB = rss();
const peakReadyMB = Math.max(peak, rssReadyMB);
peak = 0;
const batch = once(w, 'batch');
const t1 = performance.now();
fs.appendFileSync(file, `<!-- changed ${Date.now()} -->\n`);
const [report] = await batch;
const batchMs = performance.now() - t1;
clearInterval(sampler);
const rssBatchMB = rss();
const peakBatchMB = Math.max(peak, rssBatchMB);
await w.close();
const out = {
  readyMs, rssReadyMB, batchMs, peakMB: Math.max(peakReadyMB, peakBatchMB), peakBatchMB, rssBatchMB, childPeakMB: childPeak,
  compressed: report.files?.compressed ?? null, whole: report.whole,
};
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
