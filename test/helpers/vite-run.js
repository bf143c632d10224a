// Runs a real Vite build or preview in its own process (rolldown's native binding does not load
// under jest's vm modules). Usage: node test/helpers/vite-run.js '<json job>'
//   { mode: 'build' | 'watch' | 'preview', root, plugin: {options} or false (no plugin),
//     config: {extra inline config}, port?: (preview), edit?: { file, text } (watch: written after the first build),
//     vite?: 'vite' | 'vite5' | 'vite6' | 'vite7' (the package to run: aliased dev dependencies),
//     namedPlugin?: string (a plugin with only that name, added before ours) }
// Prints one JSON line per result on stdout: build → { ok, lines, error }; watch → { snapshots };
// preview → { port } then serves until stdin closes.
import fs from 'node:fs';
import path from 'node:path';
import precompressor from '../../plugins/vite.js';

const job = JSON.parse(process.argv[2]);
const { build, createLogger, preview } = await import(job.vite ?? 'vite');
const plugins = job.plugin === false ? [] : [precompressor(job.plugin)];
// another plugin by name only (to see how precompressor reacts to its presence), e.g. 'vite:compression'
if (job.namedPlugin) plugins.unshift({ name: job.namedPlugin });
const lines = [];
const inner = createLogger(job.logLevel ?? 'info', { allowClearScreen: false });
const customLogger = {
  ...inner,
  info: (msg) => void lines.push(msg),
  warn: (msg) => void lines.push(`warn: ${msg}`),
  warnOnce: (msg) => void lines.push(`warn: ${msg}`),
};
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

function listFiles(dir) {
  return fs.readdirSync(dir, { recursive: true }).map((p) => p.split(path.sep).join('/'))
    .filter((p) => fs.statSync(path.join(dir, p)).isFile()).sort();
}

// realLogger: Vite's own logger printing to stdout (to check that logLevel applies).
const base = { root: job.root, configFile: false, logLevel: 'info', ...(job.realLogger ? {} : { customLogger }), ...job.config };

if (job.mode === 'build') {
  try {
    await build({ ...base, plugins });
    out({ ok: true, lines });
  } catch (err) {
    out({ ok: false, lines, error: { message: err.message, code: err.code } });
  }
} else if (job.mode === 'watch') {
  const dist = path.resolve(job.root, job.config?.build?.outDir ?? 'dist');
  const snapshots = [];
  let finish;
  const done = new Promise((resolve) => (finish = resolve));
  // Runs after precompressor's closeBundle: both are sequential and this one comes later.
  const observer = {
    name: 'test-observer',
    enforce: 'post',
    closeBundle: {
      order: 'post',
      sequential: true,
      async handler() {
        snapshots.push({ files: listFiles(dist), lines: lines.splice(0) });
        if (snapshots.length === 1) fs.writeFileSync(path.join(job.root, job.edit.file), job.edit.text);
        else finish();
      },
    },
  };
  const watcher = await build({ ...base, plugins: [...plugins, observer], build: { ...job.config?.build, watch: {} } });
  // A rebuild can start after the second snapshot (an editor-style write can emit two events):
  // closing the watcher in the middle of it aborts its hooks, so wait for the build to end first.
  let building = false;
  let idle = () => {};
  watcher.on('event', (e) => {
    if (e.code === 'START') building = true;
    if (e.code === 'END' || e.code === 'ERROR') {
      building = false;
      idle();
    }
    if (e.code === 'ERROR') {
      out({ error: e.error.message });
      finish();
    }
  });
  await done;
  if (building) await new Promise((resolve) => (idle = resolve));
  await watcher.close();
  out({ snapshots });
} else if (job.mode === 'preview') {
  const port = job.port ?? 0; // a given port is taken or the preview fails (strictPort)
  const server = await preview({ ...base, plugins, preview: { port, strictPort: port !== 0, host: '127.0.0.1', ...job.config?.preview } });
  out({ port: server.httpServer.address().port, lines });
  process.stdin.resume();
  process.stdin.on('end', () => server.close().then(() => process.exit(0)));
}
