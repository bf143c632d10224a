// Build-time benchmark (`npm run bench:build`, #31): what compression adds to a real `vite build`.
// Two apps from Vite's own react-ts template (create-vite, pinned below): the starter as it is, and
// the same with three.js imported whole (~1 MB of JS). Each is built with no compression, with our
// plugin, with vite-plugin-compression2 (br 11 + gzip 9) and as `vite build && precompressor dist`,
// cold (empty caches) and warm (sources unchanged, caches kept), in interleaved rounds. It prints
// the time each adds over the plain build (medians) and that time over the bound: the
// single-thread CPU of Brotli 11 + gzip 9 over the plain build's output, divided by the cores, or
// the largest file's, whichever is larger. Peers install from npm into a temp folder.
//
//   node test/bench/build.js [--rounds 6] [--apps starter,three]
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { runCommand } from '../helpers/spawn.js';
import { BIN, REPO, makeApp, projectEnv } from '../helpers/framework-app.js';
import { fmt, machineInfo, markdownTable, median, timed } from './util.js';

const PEERS = ['create-vite@9.3.0', '@vitejs/plugin-react@6.3.0', 'three@0.187.0', 'vite-plugin-compression2@2.5.3'];
const { values: argv } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, apps: { type: 'string', default: 'starter,three' } } });
const ROUNDS = Number(argv.rounds);
const cores = os.availableParallelism();
const VITE = path.join(REPO, 'node_modules/vite/bin/vite.js');

/** Install the peers once into a temp folder (not dependencies of ours). */
async function installPeers() {
  const dir = path.join(os.tmpdir(), 'precompressor-bench-build-peers');
  if (!fs.existsSync(path.join(dir, 'node_modules/vite-plugin-compression2'))) {
    await fsp.mkdir(dir, { recursive: true });
    console.error(`installing ${PEERS.join(' ')} into ${dir}…`);
    const r = await runCommand('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error', ...PEERS]);
    if (r.code !== 0) throw new Error(`npm install failed:\n${r.stderr}`);
  }
  return path.join(dir, 'node_modules');
}

const CONFIGS = {
  none: { plugin: '' },
  precompressor: { plugin: "import precompressor from 'precompressor/vite';\n", use: 'precompressor()' },
  compression2: {
    plugin: "import { compression } from 'vite-plugin-compression2';\nimport zlib from 'node:zlib';\n",
    use: "compression({ algorithms: [['gzip', { level: 9 }], ['brotliCompress', { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }]] })",
  },
  postbuild: { plugin: '', post: true },
};

/** The template's files, with three.js imported whole for the larger app. */
async function templateFiles(peers, app, config) {
  const tpl = path.join(peers, 'create-vite/template-react-ts');
  const files = {};
  for (const rel of await fsp.readdir(tpl, { recursive: true })) {
    const abs = path.join(tpl, rel);
    if ((await fsp.stat(abs)).isFile() && !rel.startsWith('_')) files[rel] = await fsp.readFile(abs, 'utf8');
  }
  const c = CONFIGS[config];
  files['vite.config.ts'] = `import react from '@vitejs/plugin-react';\nimport { defineConfig } from 'vite';\n${c.plugin}` +
    `export default defineConfig({ plugins: [react()${c.use ? `, ${c.use}` : ''}], logLevel: 'warn' });\n`;
  if (app === 'three') {
    files['src/main.tsx'] = `import * as THREE from 'three';\n(globalThis as any).THREE = THREE;\n${files['src/main.tsx']}`;
  }
  return files;
}

/** An app folder whose node_modules links ours and the peers' packages. */
async function makeBenchApp(peers, app, config) {
  const root = await makeApp(`build-${app}-${config}`, await templateFiles(peers, app, config));
  for (const name of ['@vitejs', 'three', 'vite-plugin-compression2']) {
    const link = path.join(root, 'node_modules', name);
    await fsp.rm(link, { recursive: true, force: true });
    await fsp.symlink(path.join(peers, name), link);
  }
  return root;
}

/** One build (and the CLI after it for postbuild), in seconds of wall time. */
async function build(root, config) {
  const env = projectEnv();
  const v = await timed(process.execPath, [VITE, 'build'], { cwd: root, env });
  if (v.code !== 0) throw new Error(`vite build (${config}) exited ${v.code}: ${v.stderr}`);
  if (!CONFIGS[config].post) return { wallS: v.wallS, cpuS: v.cpuS };
  const p = await timed(process.execPath, [BIN, 'dist', '--quiet'], { cwd: root, env });
  if (p.code !== 0) throw new Error(`precompressor dist exited ${p.code}: ${p.stderr}`);
  return { wallS: v.wallS + p.wallS, cpuS: v.cpuS + p.cpuS };
}

/** Empty every cache a cold build must not find. */
async function makeCold(root) {
  await fsp.rm(path.join(root, 'dist'), { recursive: true, force: true });
  await fsp.rm(path.join(root, 'node_modules/.cache'), { recursive: true, force: true });
  await fsp.rm(path.join(root, 'node_modules/.vite'), { recursive: true, force: true });
}

/** The bound of compressing `dir` (the plain build's output), in seconds. */
function boundOf(dir) {
  const Z = zlib.constants;
  let work = 0;
  let largest = 0;
  let bytes = 0;
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    const abs = path.join(dir, rel);
    if (!fs.statSync(abs).isFile() || !/\.(m?js|css|html|svg|json|txt)$/.test(rel)) continue;
    const buf = fs.readFileSync(abs);
    bytes += buf.length;
    for (const f of [() => zlib.brotliCompressSync(buf, { params: { [Z.BROTLI_PARAM_QUALITY]: 11, [Z.BROTLI_PARAM_SIZE_HINT]: buf.length } }),
      () => zlib.gzipSync(buf, { level: 9 })]) {
      const t = performance.now();
      f();
      const ms = performance.now() - t;
      work += ms;
      largest = Math.max(largest, ms);
    }
  }
  return { boundS: Math.max(work / cores, largest) / 1000, bytes };
}

const peers = await installPeers();
console.error(JSON.stringify(machineInfo()));
const rows = [];
for (const app of argv.apps.split(',')) {
  const roots = {};
  for (const config of Object.keys(CONFIGS)) roots[config] = await makeBenchApp(peers, app, config);
  await build(roots.none, 'none'); // warms the OS caches of node_modules before anything is timed
  const { boundS, bytes } = boundOf(path.join(roots.none, 'dist'));
  console.error(`[${app}] output ${fmt(bytes / 1e6, 2)} MB compressible, bound ${fmt(boundS)} s`);
  const times = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const config of Object.keys(CONFIGS)) {
      await makeCold(roots[config]);
      const cold = await build(roots[config], config);
      const warm = await build(roots[config], config);
      (times[config] ??= { cold: [], warm: [] }).cold.push(cold.wallS);
      times[config].warm.push(warm.wallS);
    }
    console.error(`[${app}] round ${round + 1}/${ROUNDS}`);
  }
  const base = { cold: median(times.none.cold), warm: median(times.none.warm) };
  for (const config of Object.keys(CONFIGS).filter((c) => c !== 'none')) {
    const addedCold = median(times[config].cold) - base.cold;
    const addedWarm = median(times[config].warm) - base.warm;
    rows.push({ app, config, boundS, addedColdS: addedCold, xBound: addedCold / boundS, addedWarmS: addedWarm });
  }
  rows.push({ app, config: 'vite build alone', boundS, addedColdS: base.cold, xBound: null, addedWarmS: base.warm });
  for (const root of Object.values(roots)) await fsp.rm(root, { recursive: true, force: true });
}
const label = { precompressor: '`precompressor/vite` plugin', compression2: 'vite-plugin-compression2 (br 11 + gzip 9)',
  postbuild: '`vite build && precompressor dist`', 'vite build alone': '`vite build` alone (its own time)' };
console.log(markdownTable(['app (bound)', 'set-up', 'added, cold s', '× bound', 'added, warm s'],
  rows.map((r) => [`${r.app} (${fmt(r.boundS)} s)`, label[r.config], fmt(r.addedColdS), r.xBound === null ? '' : `${fmt(r.xBound)} ×`, fmt(r.addedWarmS)]), 'llrrr'));
console.log(JSON.stringify({ rounds: ROUNDS, cores, node: process.version, rows }));
