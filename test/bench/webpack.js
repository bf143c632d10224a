// webpack benchmark (`npm run bench:webpack`): one React app built by webpack 5 in production mode,
// without compression, with compression-webpack-plugin 12.0.0 (gzip + brotli, two instances), with
// minimizer-webpack-plugin's `compress` generators (gzip + brotli), and with PrecompressorPlugin
// (br + gzip). Each cold (no cache of any kind), then warm (same sources, after `output.clean`: webpack's
// filesystem cache for all, which holds the two peers' outputs; our variant cache for ours), then after one changed module.
// Prints one JSON line per set-up and a Markdown table (docs/webpack.md, "Measured").
//
//   node test/bench/webpack.js [rounds] [set-ups, comma-separated]
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { npmInstallCached } from './corpus.js';
import { timed, markdownTable, median } from './util.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const ROUNDS = Number(process.argv[2] ?? 3);
const SPECS = ['webpack@5.113.0', 'compression-webpack-plugin@12.0.0', 'minimizer-webpack-plugin@5.14.1', 'react@19.2.0', 'react-dom@19.2.0'];

const words = (v) => JSON.stringify(Array.from({ length: 2000 }, (_, i) => `${v}word${(i * 7919) % 1000}`));

// build.cjs <setup>: the set-ups share everything but their plugins
const BUILD = `const path = require('node:path');
const webpack = require('webpack');
const setup = process.argv[2];
const plugins = [];
const optimization = {};
if (setup === 'compression-webpack-plugin') {
  const CompressionPlugin = require('compression-webpack-plugin');
  plugins.push(new CompressionPlugin({ algorithm: 'gzip' }), new CompressionPlugin({ algorithm: 'brotliCompress', filename: '[path][base].br' }));
}
if (setup === 'minimizer-webpack-plugin') {
  const MinimizerPlugin = require('minimizer-webpack-plugin');
  optimization.minimizer = [new MinimizerPlugin({ test: /\\.(js|css|html|svg)$/i, generate: {
    gzip: { implementation: MinimizerPlugin.compress, options: { algorithm: 'gzip' }, type: 'asset', filename: '[path][base].gz' },
    brotli: { implementation: MinimizerPlugin.compress, options: { algorithm: 'brotliCompress', compressionOptions: { params: {} } }, type: 'asset', filename: '[path][base].br' },
  } })];
}
if (setup === 'precompressor') plugins.push(new (require('precompressor/webpack').default)());
webpack({
  mode: 'production', context: __dirname, entry: './src/index.js', devtool: false,
  cache: { type: 'filesystem' },
  output: { path: path.resolve(__dirname, 'dist'), filename: '[name].[contenthash].js', chunkFilename: '[name].[contenthash].js', clean: true },
  optimization, plugins,
}).run((err, stats) => {
  if (err || stats.hasErrors()) { console.error(err ?? stats.toString('errors-only')); process.exitCode = 1; }
});
`;

const modules = await npmInstallCached('bench-webpack', SPECS);
const SETUPS = process.argv[3]?.split(',') ?? ['none', 'compression-webpack-plugin', 'minimizer-webpack-plugin', 'precompressor'];

/** A fresh app folder for one set-up: node_modules links to the bench install, precompressor to this checkout. */
async function makeApp(setup) {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), `pc-bench-webpack-${setup}-`));
  await fsp.mkdir(path.join(root, 'node_modules'));
  for (const e of await fsp.readdir(modules)) await fsp.symlink(path.join(modules, e), path.join(root, 'node_modules', e));
  await fsp.symlink(REPO, path.join(root, 'node_modules', 'precompressor'));
  await fsp.mkdir(path.join(root, 'src'));
  await fsp.writeFile(path.join(root, 'build.cjs'), BUILD);
  await fsp.writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'bench', private: true }));
  await fsp.writeFile(path.join(root, 'src/index.js'), "import { createElement } from 'react';\nimport { createRoot } from 'react-dom/client';\nimport { words } from './words.js';\nimport('./lazy.js').then((m) => m.run());\ncreateRoot(document.getElementById('app')).render(createElement('ul', null, words.map((w, i) => createElement('li', { key: i }, w))));\n");
  await fsp.writeFile(path.join(root, 'src/words.js'), `export const words = ${words('v1')};\n`);
  await fsp.writeFile(path.join(root, 'src/lazy.js'), `export const run = () => console.log(${words('lazy')}.length);\n`);
  return root;
}

/** Bytes of the .br and .gz files in dist, and of the files they compress. */
function bytesOf(dist) {
  const out = { raw: 0, br: 0, gz: 0 };
  for (const f of fs.readdirSync(dist)) {
    const size = fs.statSync(path.join(dist, f)).size;
    if (f.endsWith('.br')) out.br += size;
    else if (f.endsWith('.gz')) out.gz += size;
    else if (/\.(dc[bz]|json)$/.test(f) === false) out.raw += size;
  }
  return out;
}

const rows = [];
for (const setup of SETUPS) {
  const t = { cold: [], warm: [], changed: [], coldCpu: [], warmCpu: [] };
  let bytes = null;
  for (let r = 0; r < ROUNDS; r++) {
    const root = await makeApp(setup);
    const run = async () => {
      const res = await timed(process.execPath, ['build.cjs', setup], { cwd: root, env: { ...process.env, CACHE_DIR: '' } });
      if (res.code !== 0) throw new Error(`${setup}: ${res.stderr}`);
      return res;
    };
    const cold = await run();
    if (process.env.BENCH_VERBOSE) console.error(setup, 'cold', cold.wallS, cold.cpuS);
    const warm = await run();
    t.cold.push(cold.wallS);
    t.coldCpu.push(cold.cpuS);
    t.warm.push(warm.wallS);
    t.warmCpu.push(warm.cpuS);
    await fsp.writeFile(path.join(root, 'src/words.js'), `export const words = ${words('v2')};\n`);
    t.changed.push((await run()).wallS);
    bytes = bytesOf(path.join(root, 'dist'));
    await fsp.rm(root, { recursive: true, force: true });
  }
  const row = { setup, coldS: median(t.cold), coldCpuS: median(t.coldCpu), warmS: median(t.warm), warmCpuS: median(t.warmCpu),
    changedS: median(t.changed), ...bytes };
  console.log(JSON.stringify(row));
  rows.push(row);
}
const f = (s) => s.toFixed(2);
console.log(markdownTable(['set-up', 'cold s (CPU s)', 'warm s (CPU s)', 'one module changed s', 'raw B', 'br B', 'gzip B'],
  rows.map((r) => [r.setup, `${f(r.coldS)} (${f(r.coldCpuS)})`, `${f(r.warmS)} (${f(r.warmCpuS)})`, f(r.changedS), r.raw, r.br, r.gz])));
