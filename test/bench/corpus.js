// Benchmark corpora built from real published assets. The packages are installed from the npm
// registry into a cache folder at benchmark time (never committed, never project dependencies),
// then a subset of their files is copied into the shape of a built site.
//
//   buildCorpus('mixed', dir)  ~40 MB dist: bundles, source maps, wasm, fonts, CSS, JSON, SVG, PNG
//   buildCorpus('small', dir)  ~7,000 small SVG files
//   buildCorpus('icons', dir)  ~2,000 SVG icons
//
// Run directly to build one and print its size: node test/bench/corpus.js mixed /tmp/mixed

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const execFileP = promisify(execFile);

/** Where installs are cached between runs. */
export const CACHE_DIR = path.join(os.tmpdir(), 'precompressor-bench-cache');

/** Pinned so that every run and every machine compresses the same bytes. */
export const ASSET_PACKAGES = Object.freeze([
  'three@0.187.0', 'echarts@6.1.0', 'bootstrap@5.3.9', 'lodash@4.18.1', 'd3@7.9.2', 'esbuild-wasm@0.28.2',
  '@fontsource/inter@5.3.0', 'lucide-static@1.62.0', '@tabler/icons@3.51.0', '@tabler/icons-png@3.48.0',
  'bootstrap-icons@1.13.2', 'typescript@5.9.3', 'leaflet@1.9.4',
]);

/**
 * `npm install` a list of packages into `<CACHE_DIR>/<name>` once; later calls reuse it.
 * @param {string} name cache sub-folder
 * @param {readonly string[]} specs npm package specs
 * @returns {Promise<string>} the node_modules folder
 */
export async function npmInstallCached(name, specs) {
  const prefix = path.join(CACHE_DIR, name);
  const key = crypto.createHash('sha256').update(JSON.stringify(specs)).digest('hex');
  const marker = path.join(prefix, '.installed');
  const nodeModules = path.join(prefix, 'node_modules');
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === key) return nodeModules;
  await fsp.rm(prefix, { recursive: true, force: true });
  await fsp.mkdir(prefix, { recursive: true });
  // A package.json of its own, so npm does not walk up into an unrelated project.
  await fsp.writeFile(path.join(prefix, 'package.json'), JSON.stringify({ name: `bench-${name}`, private: true }));
  await execFileP('npm', ['install', '--prefix', prefix, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund',
    '--loglevel=error', ...specs], { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } });
  await fsp.writeFile(marker, key);
  return nodeModules;
}

/**
 * What goes where. `from` is relative to node_modules; a folder takes the files whose name passes
 * `match`, sorted by name, at most `limit` of them.
 * @typedef {{ from: string, to: string, match?: RegExp, limit?: number }} Entry
 */

/** @type {Entry[]} */
const MIXED = [
  { from: 'lucide-static/font/index.html', to: 'icons.html' },
  { from: 'lucide-static/font/unicode.html', to: 'glyphs.html' },
  ...['three.core.js', 'three.module.js', 'three.webgpu.js'].map((f) => ({ from: `three/build/${f}`, to: `assets/${f}` })),
  ...['echarts.simple.js', 'echarts.simple.js.map'].map((f) => ({ from: `echarts/dist/${f}`, to: `assets/${f}` })),
  ...['lodash.js', 'lodash.min.js'].map((f) => ({ from: `lodash/${f}`, to: `assets/${f}` })),
  ...['d3.js', 'd3.min.js'].map((f) => ({ from: `d3/dist/${f}`, to: `assets/${f}` })),
  ...['leaflet.js', 'leaflet.js.map', 'leaflet.css', 'leaflet-src.esm.js'].map((f) => ({ from: `leaflet/dist/${f}`, to: `assets/${f}` })),
  { from: 'leaflet/dist/images', to: 'assets/images' },
  { from: 'bootstrap/dist/js', to: 'assets/bootstrap', match: /^bootstrap\.bundle/ },
  { from: 'bootstrap/dist/css', to: 'assets/bootstrap', match: /^bootstrap(-grid)?\.(min\.)?css(\.map)?$/ },
  ...['lib.dom.d.ts', 'lib.es5.d.ts', 'lib.webworker.d.ts'].map((f) => ({ from: `typescript/lib/${f}`, to: `types/${f}` })),
  { from: 'esbuild-wasm/esbuild.wasm', to: 'wasm/esbuild.wasm' },
  { from: 'three/examples/jsm/libs/draco/draco_decoder.wasm', to: 'wasm/draco_decoder.wasm' },
  { from: 'three/examples/jsm/libs/basis/basis_transcoder.wasm', to: 'wasm/basis_transcoder.wasm' },
  { from: '@fontsource/inter/files', to: 'fonts', match: /^inter-latin-\d+-normal\.woff2?$/ },
  { from: 'bootstrap-icons/font', to: 'fonts', match: /\.(css|json)$/ },
  { from: 'bootstrap-icons/font/fonts', to: 'fonts' },
  { from: 'lucide-static/font', to: 'fonts', match: /^lucide\.(css|ttf|woff2?|eot)$/ },
  { from: '@tabler/icons/icons.json', to: 'data/tabler-icons.json' },
  { from: 'lucide-static/icon-nodes.json', to: 'data/lucide-icon-nodes.json' },
  { from: 'lucide-static/tags.json', to: 'data/lucide-tags.json' },
  { from: 'lucide-static/sprite.svg', to: 'img/lucide-sprite.svg' },
  { from: 'bootstrap-icons/bootstrap-icons.svg', to: 'img/bootstrap-icons.svg' },
  { from: 'lucide-static/icons', to: 'img/icons', match: /\.svg$/, limit: 600 },
  { from: '@tabler/icons-png/icons/outline', to: 'img/png', match: /\.png$/, limit: 300 },
];

/** @type {Record<string, Entry[]>} */
const SHAPES = {
  mixed: MIXED,
  small: [
    { from: '@tabler/icons/icons/outline', to: 'outline', match: /\.svg$/ },
    { from: '@tabler/icons/icons/filled', to: 'filled', match: /\.svg$/ },
    { from: 'bootstrap-icons/icons', to: 'bootstrap', match: /\.svg$/, limit: 710 },
  ],
  icons: [
    { from: 'lucide-static/icons', to: 'icons', match: /\.svg$/, limit: 2000 },
  ],
};

/** The corpus kinds buildCorpus() knows. */
export const CORPUS_KINDS = Object.freeze(Object.keys(SHAPES));

async function copyEntry(nodeModules, entry, destDir) {
  const src = path.join(nodeModules, entry.from);
  const stat = await fsp.stat(src);
  const dest = path.join(destDir, entry.to);
  if (!stat.isDirectory()) {
    await fsp.mkdir(path.dirname(dest), { recursive: true });
    await fsp.copyFile(src, dest);
    return 1;
  }
  const names = (await fsp.readdir(src, { withFileTypes: true }))
    .filter((d) => d.isFile() && (!entry.match || entry.match.test(d.name)) && !/\.(br|gz|zst)$/.test(d.name))
    .map((d) => d.name)
    .sort()
    .slice(0, entry.limit ?? Infinity);
  await fsp.mkdir(dest, { recursive: true });
  await Promise.all(names.map((n) => fsp.copyFile(path.join(src, n), path.join(dest, n))));
  return names.length;
}

/**
 * Build a corpus of `kind` into `destDir` (created; must be empty or absent).
 * @param {'mixed' | 'small' | 'icons'} kind
 * @param {string} destDir
 * @returns {Promise<{ kind: string, dir: string, files: number, bytes: number }>}
 */
export async function buildCorpus(kind, destDir) {
  const shape = SHAPES[kind];
  if (!shape) throw new Error(`Unknown corpus kind ${JSON.stringify(kind)}; expected one of ${CORPUS_KINDS.join(', ')}`);
  const nodeModules = await npmInstallCached('assets', ASSET_PACKAGES);
  await fsp.mkdir(destDir, { recursive: true });
  for (const entry of shape) await copyEntry(nodeModules, entry, destDir);
  const files = await listFiles(destDir);
  const bytes = files.reduce((n, f) => n + f.size, 0);
  return { kind, dir: destDir, files: files.length, bytes };
}

/**
 * Every regular file under `dir`, with its POSIX path relative to `dir` and its size.
 * @param {string} dir
 * @returns {Promise<{ rel: string, abs: string, size: number }[]>}
 */
export async function listFiles(dir) {
  const out = [];
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  for (const d of entries) {
    if (!d.isFile()) continue;
    const abs = path.join(d.parentPath ?? d.path, d.name);
    out.push({ rel: path.relative(dir, abs).split(path.sep).join('/'), abs, size: (await fsp.stat(abs)).size });
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : 1));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind = 'mixed', dir = path.join(os.tmpdir(), `corpus-${kind}`)] = process.argv.slice(2);
  await fsp.rm(dir, { recursive: true, force: true });
  const c = await buildCorpus(kind, dir);
  console.log(`${c.kind}: ${c.files} files, ${(c.bytes / 1e6).toFixed(1)} MB in ${c.dir}`);
}
