// Watch mode in the scale benchmark, in its own process:
//   node test/bench/scale-watch.js <root> <repo root> <cache dir> <file to change>
// Measures the time from watch() to `ready` (the watcher listening, its first pass done: a warm
// run on an unchanged tree), the RSS then, and the time from changing one file to the end of the
// batch that compresses it, with the peak RSS during that batch and the RSS after it. Prints one
// JSON line (`whole`: the batch was a whole pass; absent before batches could be anything else).

import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';

const [root, repoRoot, cacheDir, file] = process.argv.slice(2);
const { watch } = await import(pathToFileURL(path.join(repoRoot, 'lib/index.js')).href);
const rss = () => process.memoryUsage().rss / 2 ** 20;
let peak = 0;
const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 50);
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
  readyMs, rssReadyMB, batchMs, peakMB: Math.max(peakReadyMB, peakBatchMB), peakBatchMB, rssBatchMB,
  compressed: report.files?.compressed ?? null, whole: report.whole,
};
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
