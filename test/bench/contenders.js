// The contenders of the compression benchmark: one entry per tool, in the order they run.
// To add one (zopfli, zstd, another peer), append an object with
//   name     label in the table
//   note     optional text shown with the results (version, flags, caveats)
//   measure  async (dir, env) => Measurement[]; `dir` is a fresh copy of the corpus that the
//            tool may write into; each Measurement is { label?, wallS, rssMB, cpuS?, otherCpuS?, outDir? }
//            (outDir: where the .br/.gz files ended up, default `dir`; label: a row suffix).
// A contender that throws becomes a row with the error; the benchmark goes on.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { npmInstallCached } from './corpus.js';
import { freshCopy, timed } from './util.js';

/**
 * @typedef {{ cores: number, repoRoot: string, skipExtensions: string[], tmp: string, reference?: string }} BenchEnv
 *   reference: another checkout of precompressor (--reference) whose cache rows are measured beside ours
 * @typedef {{ label?: string, wallS: number, rssMB: number | null, cpuS?: number | null, otherCpuS?: number | null, outDir?: string }} Measurement
 * @typedef {{ name: string, note?: string, measure: (dir: string, env: BenchEnv) => Promise<Measurement[]> }} Contender
 */

/** Fail with the command's stderr when it exited non-zero. */
function check(r, what) {
  if (r.code !== 0) throw new Error(`${what} exited with ${r.code}: ${r.stderr.split('\n').slice(-3).join(' ') || '(no stderr)'}`);
  return { wallS: r.wallS, rssMB: r.rssMB, cpuS: r.cpuS, otherCpuS: r.otherCpuS };
}

/** Install one peer package (cached) and return its node_modules. */
const peer = (spec) => npmInstallCached(`peer-${spec.replace(/[@/]/g, '_')}`, [spec]);

export const PRECOMPRESS = 'precompress@12.0.7'; // 13.x declares engines node >= 22; 12.0.7 is the last for Node >= 18
export const GZIPPER = 'gzipper@8.3.0';
const VITE_PLUGIN = 'vite-plugin-compression2@2.5.3';

/** @type {Contender[]} */
export const CONTENDERS = [
  {
    name: 'precompressor',
    note: '`node bin/precompressor.js <dir> --quiet --no-cache`; warm = the same command again on the same tree',
    async measure(dir, env) {
      const bin = path.join(env.repoRoot, 'bin/precompressor.js');
      const cold = check(await timed(process.execPath, [bin, dir, '--quiet', '--no-cache']), 'precompressor (cold)');
      const warm = check(await timed(process.execPath, [bin, dir, '--quiet', '--no-cache']), 'precompressor (warm)');
      return [{ label: 'cold', ...cold }, { label: 'warm', ...warm }];
    },
  },
  {
    name: 'precompressor cache',
    note: '`node bin/precompressor.js <dir> --quiet --cache-dir <cache>` with the variant cache: cold = an empty cache (filled on the way); ' +
      'rebuild = the output folder deleted and written again (a fresh copy of the corpus, no manifest), same cache; ' +
      'CI restore = the same on a fresh copy of the cache folder (what a CI cache step restores); ' +
      '(reference) = the same step run by the checkout given with --reference, just before ours, on the same cache',
    async measure(dir, env) {
      const pristine = `${dir}-pristine`;
      const cache = `${dir}-cache`;
      const restored = `${dir}-cache-restored`;
      await freshCopy(dir, pristine);
      const run = async (what, cacheDir, root = env.repoRoot) =>
        check(await timed(process.execPath, [path.join(root, 'bin/precompressor.js'), dir, '--quiet', '--cache-dir', cacheDir]), `precompressor (${what})`);
      const cold = await run('cold, empty cache', cache);
      const rows = [{ label: 'cold', ...cold }];
      // With --reference, each step is measured with the reference checkout first, then with ours.
      const roots = env.reference ? [[env.reference, ' (reference)'], [env.repoRoot, '']] : [[env.repoRoot, '']];
      for (const [root, suffix] of roots) {
        await freshCopy(pristine, dir); // the bundler empties and rewrites the output
        rows.push({ label: `rebuild${suffix}`, ...(await run(`rebuild${suffix}`, cache, root)) });
      }
      for (const [root, suffix] of roots) {
        await freshCopy(cache, restored);
        await freshCopy(pristine, dir);
        rows.push({ label: `CI restore${suffix}`, ...(await run(`CI restore${suffix}`, restored, root)) });
        await fsp.rm(restored, { recursive: true, force: true });
      }
      await Promise.all([pristine, cache, restored].map((d) => fsp.rm(d, { recursive: true, force: true })));
      return rows;
    },
  },
  {
    name: 'precompress',
    note: `${PRECOMPRESS} (silverwind) CLI, \`-s -e <skipped extensions>\`, default concurrency (cores); 13.x needs Node >= 22`,
    async measure(dir, env) {
      const bin = path.join(await peer(PRECOMPRESS), '.bin/precompress');
      const exclude = env.skipExtensions.map((e) => `**.${e}`).join(',');
      const args = [bin, '-s', '-t', 'gz,br', '-e', exclude, dir];
      return [check(await timed(process.execPath, args), 'precompress')];
    },
  },
  {
    name: 'gzipper',
    note: `${GZIPPER} CLI, one run \`compress --gzip --gzip-level 9 --brotli -e <skipped extensions>\` (brotli q11 is its default); workers = cores; declares engines node >= 24`,
    async measure(dir, env) {
      const bin = path.join(await peer(GZIPPER), '.bin/gzipper');
      const args = [bin, 'compress', '--gzip', '--gzip-level', '9', '--brotli', '--workers', String(env.cores),
        '-e', env.skipExtensions.join(','), dir];
      return [check(await timed(process.execPath, args), 'gzipper')];
    },
  },
  {
    name: 'vite-plugin-compression2',
    note: `${VITE_PLUGIN} with algorithms gzip + brotliCompress (levels 9 / q11 are its defaults), include all, exclude skipped extensions, threshold 0; corpus as publicDir; wall = build with plugin − the same build without; RSS of the build with plugin`,
    async measure(dir, env) {
      const pluginDir = path.join(await peer(VITE_PLUGIN), 'vite-plugin-compression2');
      const pkg = JSON.parse(fs.readFileSync(path.join(pluginDir, 'package.json'), 'utf8'));
      const pluginEntry = path.join(pluginDir, pkg.exports['.'].import);
      const viteEntry = path.join(env.repoRoot, 'node_modules/vite/dist/node/index.js');
      if (!fs.existsSync(viteEntry)) throw new Error(`vite not found at ${viteEntry}`);
      const root = path.join(env.tmp, 'vite-root');
      await fsp.rm(root, { recursive: true, force: true });
      await fsp.mkdir(root, { recursive: true });
      await fsp.writeFile(path.join(root, 'index.html'), '<!doctype html><html><body><script type="module" src="/main.js"></script></body></html>\n');
      await fsp.writeFile(path.join(root, 'main.js'), 'document.body.append("bench");\n');
      const script = path.join(root, 'build.mjs');
      await fsp.writeFile(script, VITE_BUILD_SCRIPT);
      const run = async (withPlugin, outDir) => check(await timed(process.execPath, [script, pathToFileURL(viteEntry).href,
        withPlugin ? pathToFileURL(pluginEntry).href : '', root, dir, outDir, env.skipExtensions.join(',')]),
      `vite build ${withPlugin ? 'with' : 'without'} plugin`);
      const base = await run(false, path.join(env.tmp, 'vite-out-base'));
      const outDir = path.join(env.tmp, 'vite-out');
      const withPlugin = await run(true, outDir);
      await fsp.rm(path.join(env.tmp, 'vite-out-base'), { recursive: true, force: true });
      const sub = (a, b) => (a === null || b === null ? null : a - b);
      return [{ wallS: withPlugin.wallS - base.wallS, rssMB: withPlugin.rssMB, cpuS: sub(withPlugin.cpuS, base.cpuS),
        otherCpuS: sub(withPlugin.otherCpuS + base.otherCpuS, 0), outDir }];
    },
  },
  {
    name: 'find | xargs brotli + gzip',
    note: '`find -type f -size +0 ! -iname <skipped> -print0 | xargs -0 -P<cores> -n 8 sh -c \'brotli -q 11 -f -- "$@" && gzip -9 -k -f -- "$@"\'` (Debian brotli and gzip CLIs)',
    async measure(dir, env) {
      const notSkipped = env.skipExtensions.map((e) => `! -iname '*.${e}'`).join(' ');
      const sh = `find . -type f -size +0 ${notSkipped} -print0 | xargs -0 -P ${env.cores} -n 8 sh -c 'brotli -q 11 -f -- "$@" && gzip -9 -k -f -- "$@"' _`;
      return [check(await timed('sh', ['-c', sh], { cwd: dir }), 'find | xargs')];
    },
  },
];

// Run by the vite contender in its own process: argv = viteURL pluginURL|'' root publicDir outDir skipExts
const VITE_BUILD_SCRIPT = `
const [viteUrl, pluginUrl, root, publicDir, outDir, skip] = process.argv.slice(2);
const { build } = await import(viteUrl);
const plugins = [];
if (pluginUrl) {
  const { compression } = await import(pluginUrl);
  const exclude = new RegExp('\\\\.(' + skip.split(',').join('|') + ')$', 'i');
  plugins.push(compression({ algorithms: ['gzip', 'brotliCompress'], include: /./, exclude, threshold: 0, logLevel: 'silent' }));
}
await build({ root, publicDir, configFile: false, logLevel: 'silent', plugins,
  build: { outDir, emptyOutDir: true, copyPublicDir: true, reportCompressedSize: false } });
`;
