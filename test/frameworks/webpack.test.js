import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { runCommand } from '../helpers/spawn.js';
import { makeApp, unsupported, manifestOf, projectEnv, startServe, get } from '../helpers/framework-app.js';

// webpack 5 and Rspack, built for real through their Node APIs (a script in the app, run as the
// user's build would be) with `new PrecompressorPlugin()` from 'precompressor/webpack'.

/** A module big enough for deploy deltas, `version` in its data. */
function wordsOf(version) {
  const words = Array.from({ length: 600 }, (_, i) => `${version}word${(i * 7919) % 1000}`);
  return `export const words = ${JSON.stringify(words)};\n`;
}

// build.mjs <webpack|rspack> <run|watch|dev>; PC_OPTIONS: the plugin's options; PC_FILENAME: output.filename
const BUILD = `import path from 'node:path';
import PrecompressorPlugin from 'precompressor/webpack';
const [bundler, mode] = process.argv.slice(2);
const create = bundler === 'rspack' ? (await import('@rspack/core')).rspack : (await import('webpack')).default;
const filename = process.env.PC_FILENAME ?? '[name].[contenthash].js';
const compiler = create({
  mode: 'production', context: process.cwd(), entry: './src/index.js', devtool: false,
  output: { path: path.resolve('dist'), filename, chunkFilename: filename, clean: true },
  plugins: [new PrecompressorPlugin(JSON.parse(process.env.PC_OPTIONS ?? '{}'))],
});
const mainOf = (stats) => stats.toJson({ assets: true }).assets.map((a) => a.name).find((n) => n.startsWith('main'));
if (mode === 'run') {
  compiler.run((err, stats) => {
    if (err || stats.hasErrors()) console.error('BUILD FAILED', err ?? stats.toString({ all: false, errors: true }));
    else console.log('built', mainOf(stats));
    compiler.close(() => { process.exitCode = err || stats.hasErrors() ? 1 : 0; });
  });
} else if (mode === 'watch') {
  let first;
  const watching = compiler.watch({ aggregateTimeout: 20 }, (err, stats) => {
    if (err || stats.hasErrors()) throw err ?? new Error(stats.toString({ all: false, errors: true }));
    const main = mainOf(stats);
    console.log('built', main);
    first ??= main;
    if (main !== first) watching.close(() => console.log('closed'));
  });
} else {
  const { default: devMiddleware } = await import('webpack-dev-middleware');
  const mw = devMiddleware(compiler);
  mw.waitUntilValid((stats) => {
    console.log('valid', stats.hasErrors());
    mw.close(() => compiler.close(() => {}));
  });
}
`;

const appFiles = () => ({
  'build.mjs': BUILD,
  'src/index.js': "import { words } from './words.js';\nimport('./lazy.js').then((m) => console.log(m.greet(words.length)));\nconsole.log(words.join(' '));\n",
  'src/lazy.js': wordsOf('lazy').replace('words', 'lazyWords') + 'export const greet = (n) => `hello ${n} ${lazyWords.length}`;\n',
  'src/words.js': wordsOf('v1'),
});

const apps = [];
afterAll(() => Promise.all(apps.map((a) => fsp.rm(a, { recursive: true, force: true }))));

/** Run the app's build script (`mode`: run, dev); rejects with its output when it exits non-zero. */
async function build(root, bundler, env = {}, mode = 'run') {
  const r = await runCommand(process.execPath, ['build.mjs', bundler, mode], { cwd: root, env: { ...projectEnv(), ...env } });
  const output = r.stdout + r.stderr;
  if (r.code !== 0) throw new Error(`build.mjs ${bundler} ${mode} exited ${r.code}:\n${output}`);
  return { output };
}

const readOut = (out, rel) => fs.readFileSync(path.join(out, rel));
const mainOf = (m) => /** @type {string} */ (Object.keys(m.files).find((f) => /^main\..*\.js$/.test(f)));

describe.each(['webpack', 'rspack'])('%s', (bundler) => {
  const skip = unsupported([bundler === 'rspack' ? '@rspack/core' : 'webpack']);
  if (skip) console.warn(`${bundler} tests skipped: ${skip}`);
  const maybe = skip ? test.skip : test;

  maybe('[name].[contenthash].js: variants and a manifest after the build; the next build has a delta for the changed entry bundle', async () => {
    const root = await makeApp(`${bundler}-hashed`, appFiles());
    apps.push(root);
    const out = path.join(root, 'dist');
    const first = await build(root, bundler);
    expect(first.output).toMatch(/precompressor: \d+ compressed/);
    const m1 = manifestOf(out);
    const main1 = mainOf(m1);
    const lazy = Object.keys(m1.files).find((f) => f !== main1 && f.endsWith('.js'));
    expect(m1.files[main1].dictionary).toMatchObject({ hashed: true, dest: 'script', match: 'main.*.js' });
    for (const rel of [main1, lazy]) {
      expect(zlib.brotliDecompressSync(readOut(out, `${rel}.br`))).toEqual(readOut(out, rel));
      expect(zlib.gunzipSync(readOut(out, `${rel}.gz`))).toEqual(readOut(out, rel));
    }
    const served = await startServe(out);
    try {
      const r = await get(`${served.origin}/${main1}`, { 'accept-encoding': 'br' });
      expect(r.headers['content-encoding']).toBe('br');
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    } finally {
      await served.stop();
    }

    if (deltaEncoders().length === 0) return;
    await fsp.writeFile(path.join(root, 'src/words.js'), wordsOf('v2'));
    const second = await build(root, bundler);
    // output.clean keeps what the manifest lists as ours: the unchanged chunk's variants stay
    expect(second.output).toMatch(/precompressor: 1 compressed, 1 unchanged, 2 files/);
    const m2 = manifestOf(out);
    const main2 = mainOf(m2);
    expect(main2).not.toBe(main1);
    expect(Object.keys(m2.files[main2].deltas ?? {})).toEqual([m1.files[main1].dictionary.hash]);
  });

  maybe('watch: a rebuild recompresses only the bundle that changed, and removes the variants of the one it replaced', async () => {
    const root = await makeApp(`${bundler}-watch`, appFiles());
    apps.push(root);
    const out = path.join(root, 'dist');
    const child = spawn(process.execPath, ['build.mjs', bundler, 'watch'], {
      cwd: root, env: { ...projectEnv(), PC_OPTIONS: JSON.stringify({ verbose: true }) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise((resolve) => child.once('close', resolve));
    /** @type {{ main1: string, lazy: string, lazyStat: fs.Stats } | null} */
    let before = null;
    let changed = '';
    await new Promise((resolve, reject) => {
      const onData = (d) => {
        output += d;
        if (before === null && /built main/.test(output)) {
          const m = manifestOf(out);
          const main1 = mainOf(m);
          const lazy = /** @type {string} */ (Object.keys(m.files).find((f) => f !== main1 && f.endsWith('.js')));
          before = { main1, lazy, lazyStat: fs.statSync(path.join(out, `${lazy}.br`)) };
          changed = output;
          fs.writeFileSync(path.join(root, 'src/words.js'), wordsOf('v2'));
        }
        if (/closed/.test(output)) resolve(undefined);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      exited.then((code) => reject(new Error(`watch exited ${code}:\n${output}`)));
    });
    await exited;
    const { main1, lazy, lazyStat } = /** @type {any} */ (before);
    const m = manifestOf(out);
    const main2 = mainOf(m);
    expect(main2).not.toBe(main1);
    const rebuilt = output.slice(changed.length);
    expect(rebuilt).toContain(`compress ${main2}`);
    expect(rebuilt).not.toMatch(new RegExp(`compress ${lazy.replace(/\./g, '\\.')}`));
    const lazyAfter = fs.statSync(path.join(out, `${lazy}.br`));
    expect([lazyAfter.ino, lazyAfter.mtimeMs]).toEqual([lazyStat.ino, lazyStat.mtimeMs]); // not rewritten
    expect(fs.existsSync(path.join(out, `${main1}.br`))).toBe(false);
    expect(zlib.brotliDecompressSync(readOut(out, `${main2}.br`))).toEqual(readOut(out, main2));
  });

  maybe('[name].js, no hash: variants, and deltas a browser cannot use are not counted (0 servable)', async () => {
    const root = await makeApp(`${bundler}-unhashed`, appFiles());
    apps.push(root);
    const env = { PC_FILENAME: '[name].js' };
    await build(root, bundler, env);
    const out = path.join(root, 'dist');
    expect(manifestOf(out).files['main.js'].hashed).toBeUndefined();
    await fsp.writeFile(path.join(root, 'src/words.js'), wordsOf('v2'));
    const second = await build(root, bundler, env);
    expect(second.output).not.toMatch(/deltas: [1-9]\d* servable/);
    if (deltaEncoders().length > 0) expect(second.output).toMatch(/deltas: 0 servable files \(\d+ written\); 1 more for unhashed names/);
    const served = await startServe(out);
    try {
      const r = await get(`${served.origin}/main.js`, { 'accept-encoding': 'br' });
      expect(r.headers['content-encoding']).toBe('br');
      expect(r.headers['cache-control']).toBe('public, max-age=0');
    } finally {
      await served.stop();
    }
  });

  maybe('a file that fails fails the build, named in its errors', async () => {
    const root = await makeApp(`${bundler}-fails`, appFiles());
    apps.push(root);
    // The manifest cannot be written under a file: a failure the report names.
    const env = { PC_FILENAME: '[name].js', PC_OPTIONS: JSON.stringify({ manifest: 'main.js/precompressor-manifest.json' }) };
    await expect(build(root, bundler, env)).rejects.toThrow(/BUILD FAILED[^]*precompressor: some files could not be compressed:\n[^]*main\.js\/precompressor-manifest\.json: /);
  });

  maybe('webpack-dev-middleware: the output stays in memory, nothing is compressed or written', async () => {
    const root = await makeApp(`${bundler}-dev`, appFiles());
    apps.push(root);
    const r = await build(root, bundler, {}, 'dev');
    expect(r.output).toContain('valid false');
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'node_modules/.cache/precompressor'))).toBe(false);
  });
});
