// examples/dev-server.js: serve dist/ while your build tool rewrites it
import express from 'express';
import { serveStatic, watch } from 'precompressor';

const root = 'dist';
// One set of settings: the first pass compresses what is not yet compressed with them (nothing on a
// restart) and writes the manifest that serveStatic needs, then every batch uses them too.
const watcher = watch(root, { brotliQuality: 5 }); // faster than 11 while developing
watcher.on('batch', (r) => {
  for (const c of r.changes) console.log(`${c.action} ${c.path}`);
  for (const f of r.failures) console.error(`error: ${f.path}: ${f.message}`);
});
watcher.on('error', (err) => console.error(err.message));
await watcher.ready; // the first pass is done: the manifest exists

const app = express();
app.use(serveStatic(root, { maxAge: 0 }));
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/`); // this machine only: host '0.0.0.0' for all
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    server.closeAllConnections();
    await watcher.close(); // after the batch in flight: the manifest matches the files
    process.exit(0);
  });
}
