// Build-time benchmark (`npm run bench:build`, #31): what compression adds to a real `vite build`.
// Two apps from Vite's own react-ts template (create-vite, pinned below): the starter as it is, and
// the same with three.js imported whole (~1 MB of JS). Each is built with no compression, with our
// plugin, with vite-plugin-compression2 (br 11 + gzip 9) and as `vite build && precompressor dist`,
// cold (empty caches) and warm (sources unchanged, caches kept), in interleaved rounds. It prints
// the time each adds over the plain build (medians) and that time over the bound: the
// single-thread CPU of Brotli 11 + gzip 9 over the plain build's output, divided by the cores, or
// the largest file's, whichever is larger (measured in every round; the median). Peers install from npm into a temp folder.
// `--apps` may also name `files10`: ten small files of the same template (59 KB) compressed by the
// CLI cold (an empty cache) and with nothing to do, by `precompress -t gz,br` and by gzipper, with an
// empty `node` for scale, in interleaved rounds (wall time medians).
//
//   node test/bench/build.js [--rounds 6] [--apps starter,three,files10] [--configs precompressor,postbuild]
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { runCommand } from '../helpers/spawn.js';
import { BIN, REPO, makeApp, projectEnv } from '../helpers/framework-app.js';
import { fmt, freshCopy, machineInfo, markdownTable, median, timed } from './util.js';
import { npmInstallCached } from './corpus.js';
import { GZIPPER, PRECOMPRESS } from './contenders.js';

const PEERS = ['create-vite@9.3.0', '@vitejs/plugin-react@6.3.0', 'three@0.187.0', 'vite-plugin-compression2@2.5.3'];
const { values: argv } = parseArgs({ options: {
  rounds: { type: 'string', default: '6' }, apps: { type: 'string', default: 'starter,three,files10' },
  configs: { type: 'string', default: 'precompressor,compression2,postbuild' },
} });
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

const BR11 = (/** @type {Buffer} */ buf) => ({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
  [zlib.constants.BROTLI_PARAM_SIZE_HINT]: buf.length } });

/**
 * The largest file's Brotli 11 while the other cores each run Brotli 11 in a loop, in seconds: the
 * bound counts the cores as independent; where they slow each other (a shared host, other load) no
 * tool reaches it, and this says by how much (printed beside the table, not used in the ratios).
 * @param {Buffer} largest
 */
async function contendedLargest(largest) {
  const { Worker } = await import('node:worker_threads');
  const loop = `const zlib = require('node:zlib'); const { parentPort, workerData } = require('node:worker_threads');
    let stop = false; parentPort.once('message', () => { stop = true; });
    const tick = () => { if (stop) return parentPort.close(); zlib.brotliCompressSync(workerData, { params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }); parentPort.postMessage('busy'); setImmediate(tick); }; tick();`;
  const others = Array.from({ length: Math.max(1, cores - 1) }, () =>
    new Worker(loop, { eval: true, workerData: largest.subarray(0, 32 * 1024) }));
  await Promise.all(others.map((w) => new Promise((resolve) => w.once('message', resolve)))); // each is encoding
  const t = performance.now();
  zlib.brotliCompressSync(largest, BR11(largest));
  const s = (performance.now() - t) / 1000;
  for (const w of others) w.postMessage('stop');
  await Promise.all(others.map((w) => new Promise((resolve) => w.once('exit', resolve))));
  return s;
}

/** The bound of compressing `dir` (the plain build's output), in seconds. */
function boundOf(dir) {
  const Z = zlib.constants;
  let work = 0;
  let largest = 0;
  let bytes = 0;
  let largestFile = Buffer.alloc(0);
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    const abs = path.join(dir, rel);
    if (!fs.statSync(abs).isFile() || !/\.(m?js|css|html|svg|json|txt)$/.test(rel)) continue;
    const buf = fs.readFileSync(abs);
    bytes += buf.length;
    if (buf.length > largestFile.length) largestFile = buf;
    for (const f of [() => zlib.brotliCompressSync(buf, { params: { [Z.BROTLI_PARAM_QUALITY]: 11, [Z.BROTLI_PARAM_SIZE_HINT]: buf.length } }),
      () => zlib.gzipSync(buf, { level: 9 })]) {
      const t = performance.now();
      f();
      const ms = performance.now() - t;
      work += ms;
      largest = Math.max(largest, ms);
    }
  }
  return { boundS: Math.max(work / cores, largest) / 1000, bytes, largestS: largest / 1000, largestFile };
}

/** The ten files of the small site: the template's, renamed to extensions every contender compresses. */
const FILES10 = ['template-lit-ts/src/my-element.ts', 'template-lit/src/my-element.js', 'template-react-ts/public/favicon.svg',
  'template-react-ts/src/assets/vite.svg', 'template-vue-ts/src/style.css', 'template-react-ts/index.html',
  'template-react-ts/src/App.tsx', 'template-react-ts/src/App.css', 'template-react-ts/src/index.css',
  'template-vue-ts/src/components/HelloWorld.vue'];

/** The CLI against the small tools on ten small files, cold and with nothing to do, interleaved. */
async function files10(peers) {
  const src = path.join(os.tmpdir(), `precompressor-bench-files10-${process.pid}`);
  await fsp.mkdir(src, { recursive: true });
  for (const [i, rel] of FILES10.entries()) {
    const name = path.basename(rel).replace(/\.tsx?$/, '.js').replace(/\.vue$/, '.html');
    await fsp.copyFile(path.join(peers, 'create-vite', rel), path.join(src, `${i + 1}-${name}`));
  }
  const pc = path.join(await npmInstallCached(`peer-${PRECOMPRESS.replace(/[@/]/g, '_')}`, [PRECOMPRESS]), '.bin/precompress');
  const gz = path.join(await npmInstallCached(`peer-${GZIPPER.replace(/[@/]/g, '_')}`, [GZIPPER]), '.bin/gzipper');
  const work = `${src}-work`;
  const warmDir = `${src}-warm`;
  const cache = `${src}-cache`;
  await freshCopy(src, warmDir);
  const ours = (dir) => [BIN, dir, '--quiet', '--cache-dir', cache];
  await fsp.rm(cache, { recursive: true, force: true });
  await timed(process.execPath, ours(warmDir)); // the warm tree's first run
  const runs = {
    'precompressor (cold, empty cache)': { fresh: true, args: (d) => ours(d), cold: true },
    'precompressor (nothing to do)': { fresh: false, args: () => ours(warmDir) },
    '`precompress -t gz,br`': { fresh: true, args: (d) => [pc, '-s', '-t', 'gz,br', d] },
    '`gzipper compress --gzip --gzip-level 9 --brotli`': { fresh: true, args: (d) => [gz, 'compress', '--gzip', '--gzip-level', '9', '--brotli', d] },
    'empty `node -e 0`': { fresh: false, args: () => ['-e', '0'] },
  };
  const times = Object.fromEntries(Object.keys(runs).map((k) => [k, { wall: [], cpu: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, r] of Object.entries(runs)) {
      if (r.fresh) await freshCopy(src, work);
      if (r.cold) await fsp.rm(cache, { recursive: true, force: true });
      const t = await timed(process.execPath, r.args(work));
      if (t.code !== 0) throw new Error(`${name} exited ${t.code}: ${t.stderr}`);
      times[name].wall.push(t.wallS);
      times[name].cpu.push(t.cpuS ?? NaN);
    }
    console.error(`[files10] round ${round + 1}/${ROUNDS}`);
  }
  for (const d of [src, work, warmDir, cache]) await fsp.rm(d, { recursive: true, force: true });
  return Object.entries(times).map(([name, t]) => ({ name, wallS: median(t.wall), cpuS: median(t.cpu) }));
}

const peers = await installPeers();
console.error(JSON.stringify(machineInfo()));
const rows = [];
/** @type {Record<string, number[]>} the largest encode under contention over alone, per app and round */
const contention = {};
let small = null;
const chosen = ['none', ...argv.configs.split(',').filter((c) => c !== 'none')];
for (const c of chosen) if (!CONFIGS[c]) throw new Error(`--configs: unknown ${c} (${Object.keys(CONFIGS).join(', ')})`);
for (const app of argv.apps.split(',')) {
  if (app === 'files10') {
    small = await files10(peers);
    continue;
  }
  const roots = {};
  for (const config of chosen) roots[config] = await makeBenchApp(peers, app, config);
  await build(roots.none, 'none'); // warms the OS caches of node_modules before anything is timed
  const bounds = [];
  const times = {};
  for (let round = 0; round < ROUNDS; round++) {
    // measured in every round, as the builds are: on a shared machine one measure can be far off
    const { boundS, bytes, largestS, largestFile } = boundOf(path.join(roots.none, 'dist'));
    if (round === 0) console.error(`[${app}] output ${fmt(bytes / 1e6, 2)} MB compressible`);
    bounds.push(boundS);
    (contention[app] ??= []).push((await contendedLargest(largestFile)) / largestS);
    for (const config of chosen) {
      await makeCold(roots[config]);
      const cold = await build(roots[config], config);
      const warm = await build(roots[config], config);
      const t = (times[config] ??= { cold: [], warm: [], coldCpu: [], warmCpu: [] });
      t.cold.push(cold.wallS);
      t.warm.push(warm.wallS);
      t.coldCpu.push(cold.cpuS ?? NaN);
      t.warmCpu.push(warm.cpuS ?? NaN);
    }
    console.error(`[${app}] round ${round + 1}/${ROUNDS}, bound ${fmt(boundS)} s`);
  }
  const boundS = median(bounds);
  // CPU seconds (user + sys of the build's processes) beside the wall time: a shared machine stretches the latter
  const m = (/** @type {string} */ config, /** @type {string} */ k) => median(times[config][k]);
  const base = { cold: m('none', 'cold'), warm: m('none', 'warm'), coldCpu: m('none', 'coldCpu'), warmCpu: m('none', 'warmCpu') };
  for (const config of chosen.filter((c) => c !== 'none')) {
    const addedCold = m(config, 'cold') - base.cold;
    rows.push({ app, config, boundS, addedColdS: addedCold, xBound: addedCold / boundS, addedWarmS: m(config, 'warm') - base.warm,
      addedColdCpuS: m(config, 'coldCpu') - base.coldCpu, addedWarmCpuS: m(config, 'warmCpu') - base.warmCpu });
  }
  rows.push({ app, config: 'vite build alone', boundS, addedColdS: base.cold, xBound: null, addedWarmS: base.warm,
    addedColdCpuS: base.coldCpu, addedWarmCpuS: base.warmCpu });
  for (const root of Object.values(roots)) await fsp.rm(root, { recursive: true, force: true });
}
const label = { precompressor: '`precompressor/vite` plugin', compression2: 'vite-plugin-compression2 (br 11 + gzip 9)',
  postbuild: '`vite build && precompressor dist`', 'vite build alone': '`vite build` alone (its own time)' };
const headers = ['app (bound)', 'set-up', 'added, cold s', '× bound', 'added, warm s', 'added CPU s, cold / warm'];
if (rows.length > 0) console.log(markdownTable(headers, rows.map((r) => [`${r.app} (${fmt(r.boundS)} s)`, label[r.config],
  fmt(r.addedColdS), r.xBound === null ? '' : `${fmt(r.xBound)} ×`, fmt(r.addedWarmS),
  `${fmt(r.addedColdCpuS)} / ${fmt(r.addedWarmCpuS)}`]), 'llrrrr'));
for (const [app, ratios] of Object.entries(contention)) {
  console.log(`\n${app}: the largest file's Brotli 11 took ${fmt(median(ratios))} × its time alone while the other ` +
    `core${cores > 2 ? 's' : ''} ran Brotli too (median of ${ratios.length}); above 1, the cores slow each other and the bound ` +
    'is out of reach by that much.');
}
if (small) {
  console.log(`\nTen small files (59 KB), ${ROUNDS} interleaved rounds, medians:\n`);
  console.log(markdownTable(['command', 'wall s', 'CPU s'], small.map((r) => [r.name, fmt(r.wallS, 3), fmt(r.cpuS, 2)]), 'lrr'));
}
console.log(JSON.stringify({ rounds: ROUNDS, cores, node: process.version, rows, files10: small,
  contention: Object.fromEntries(Object.entries(contention).map(([app, r]) => [app, median(r)])) }));
