// examples/watch.js: recompress what changes in dist/, until Ctrl+C
import { watch } from 'precompressor';

const watcher = watch('dist', { exclude: ['**/*.map'], debounce: 50 });
watcher.on('batch', (report) => {
  for (const c of report.changes) console.log(c.action, c.path);
  for (const f of report.failures) console.error(`${f.path}: ${f.message}`);
});
watcher.on('error', (err) => console.error(err.message)); // a pass could not run; still watching
await watcher.ready; // the first pass is done and events are being watched
console.log('watching dist');
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => watcher.close()); // waits for the batch in flight, then the process ends
}
