import fs from 'node:fs/promises';
import path from 'node:path';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

// The CLI's fixed cost (#31): --version answered before anything loads, V8's compile cache kept.
const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const PKG = JSON.parse(await fs.readFile(new URL('../../package.json', import.meta.url), 'utf8'));
const hasCompileCache = typeof module.enableCompileCache === 'function';

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** @param {string[]} args @param {Record<string, string>} env */
const run = (args, env = {}) => runCommand(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });

test('--version prints the package version alone, as yargs did', async () => {
  const r = await run(['--version']);
  expect(r).toMatchObject({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
});

(hasCompileCache ? test : test.skip)('a run fills the compile cache, by default in the temp folder', async () => {
  const cache = path.join(root, 'node-compile-cache');
  await writeTree(path.join(root, 'site'), { 'a.js': textOf(20_000) });
  const env = { ...process.env, TMPDIR: root };
  delete env.NODE_COMPILE_CACHE;
  const r = await runCommand(process.execPath, [BIN, path.join(root, 'site'), '--quiet', '--cache-dir', path.join(root, 'vc')],
    { env });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  const files = await fs.readdir(cache, { recursive: true });
  expect(files.length).toBeGreaterThan(0);
});

test('a compile cache folder that cannot be written is no error', async () => {
  const blocker = path.join(root, 'file');
  await fs.writeFile(blocker, 'not a folder');
  await writeTree(path.join(root, 'site'), { 'a.js': textOf(20_000) });
  const env = { NODE_COMPILE_CACHE: path.join(blocker, 'cc') };
  const r = await run([path.join(root, 'site'), '--quiet', '--cache-dir', path.join(root, 'vc')], env);
  expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  await expect(fs.stat(path.join(root, 'site', 'a.js.br'))).resolves.toBeTruthy();
});

// What a run loads (#31), observed with module hooks in the child: a build's time is mostly loading.
const hasHooks = typeof module.registerHooks === 'function';
if (!hasHooks) console.warn(`load tests skipped: Node ${process.version} has no module.registerHooks (22.15+)`);
const RECORDER = `import module from 'node:module';
import fs from 'node:fs';
const seen = new Set();
module.registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); seen.add(r.url); return r; } });
process.on('exit', () => fs.writeFileSync(process.env.LOADED_OUT, [...seen].join('\\n')));
`;

/** The modules a node run with `args` resolved (URLs), through the recorder above. @param {string[]} args */
async function loadedBy(args) {
  const recorder = path.join(root, 'recorder.mjs');
  const out = path.join(root, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  await fs.writeFile(recorder, RECORDER);
  const r = await runCommand(process.execPath, ['--import', pathToFileURL(recorder).href, ...args],
    { env: { ...process.env, LOADED_OUT: out } });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  return (await fs.readFile(out, 'utf8')).split('\n');
}

// An ESM import of node:http reads all its exports, loading Node's fetch (undici): ~35 ms of CPU.
const NOT_FOR_A_BUILD = [/^node:https?$/, /\/mime-types\//, /\/lib\/servers\//, /\/lib\/serve\//, /\/yargs\//];

(hasHooks ? test : test.skip)('a compress run, cold and warm, loads no HTTP, serving or MIME module', async () => {
  const site = path.join(root, 'site');
  await writeTree(site, { 'a.js': textOf(20_000, 1), 'b.css': textOf(5000, 2), 'index.html': textOf(3000, 3) });
  for (const run of ['cold', 'warm']) {
    const loaded = await loadedBy([BIN, site, '--quiet', '--cache-dir', path.join(root, 'vc')]);
    expect(loaded.some((u) => u.endsWith('/lib/compress/index.js'))).toBe(true); // the recorder sees our modules
    expect({ run, unwanted: loaded.filter((u) => NOT_FOR_A_BUILD.some((re) => re.test(u))) }).toEqual({ run, unwanted: [] });
  }
});

// A small cold build is done on the planning thread (lib/compress/pass/cache-first.js): the worker
// pool and its heap pacing (node:v8, node:vm) are loaded only when a pass starts a worker; the remote
// cache's modules only with a remote; the site dictionary's choice and the pairing by content only
// when a site has pages or hash-named folders to pair.
const NOT_FOR_A_SMALL_BUILD = [/\/lib\/compress\/pool\//, /\/lib\/util\/heap-pace\.js$/, /^node:v8$/, /^node:vm$/,
  /\/pass\/remote-run\.js$/, /\/dictionaries\/(dictionary-remote|similarity|choose-dictionary)\.js$/];

(hasHooks ? test : test.skip)('a small cold build loads no worker pool', async () => {
  const site = path.join(root, 'site');
  await writeTree(site, { 'a.js': textOf(20_000, 1), 'b.css': textOf(5000, 2), 'index.html': textOf(3000, 3) });
  const loaded = await loadedBy([BIN, site, '--quiet', '--cache-dir', path.join(root, 'vc')]);
  expect(loaded.some((u) => u.endsWith('/lib/compress/pass/compressions.js'))).toBe(true);
  expect(loaded.filter((u) => NOT_FOR_A_SMALL_BUILD.some((re) => re.test(u)))).toEqual([]);
  await expect(fs.stat(path.join(site, 'a.js.br'))).resolves.toBeTruthy();
});

(hasHooks ? test : test.skip)('a warm run (nothing changed) loads no walker: it reads the folder itself', async () => {
  const site = path.join(root, 'site');
  await writeTree(site, { 'a.js': textOf(20_000, 1), 'b.css': textOf(5000, 2), 'index.html': textOf(3000, 3) });
  const args = [BIN, site, '--quiet', '--cache-dir', path.join(root, 'vc')];
  expect((await loadedBy(args)).filter((u) => u.includes('/fast-glob/')).length).toBeGreaterThan(0); // the cold run walks
  const warm = await loadedBy(args);
  expect(warm.some((u) => u.endsWith('/lib/compress/pass/warm-run.js'))).toBe(true);
  expect(warm.filter((u) => u.includes('/fast-glob/') || u.includes('/micromatch/'))).toEqual([]);
});

(hasHooks ? test : test.skip)('the Vite plugin loads the compressor only when asked (in closeBundle), not with the config', async () => {
  const plugin = pathToFileURL(fileURLToPath(new URL('../../plugins/vite.js', import.meta.url))).href;
  const folder = pathToFileURL(fileURLToPath(new URL('../../plugins/compress-folder.js', import.meta.url))).href;
  // the config made, then the hooks a build runs before the bundle is written
  const hooks = `const h = p(); h.configResolved({ build: { ssr: false }, command: 'build', plugins: [], logger: { warn() {} } });
    h.buildStart.call({});`;
  const config = await loadedBy(['--input-type=module', '-e', `const { default: p } = await import(${JSON.stringify(plugin)}); ${hooks}`]);
  expect(config.filter((u) => u.includes('/lib/compress/'))).toEqual([]);
  expect(config.filter((u) => NOT_FOR_A_BUILD.some((re) => re.test(u)))).toEqual([]);
  const build = await loadedBy(['--input-type=module', '-e', `await (await import(${JSON.stringify(folder)})).loadCompressor();`]);
  expect(build.some((u) => u.endsWith('/lib/compress/pass/precompress.js'))).toBe(true);
  expect(build.filter((u) => NOT_FOR_A_BUILD.some((re) => re.test(u)))).toEqual([]);
});
