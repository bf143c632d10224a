import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import nuxtModule from '../../plugins/nuxt.js';
import astro from '../../plugins/astro.js';
import { precompressed } from '../../plugins/sveltekit.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// The `manifest` option of the framework entries follows the CLI's rule at the manifest's final path
// (plugins/compress-folder.js): only over a missing file or a manifest of ours, never over a symlink
// or another kind of file, and inside the output folder. Each entry is driven here through the hooks
// its framework calls, in the order it calls them (the real builds are in test/frameworks/; Vite's
// case is in vite.test.js).

let tmp;
beforeAll(async () => {
  tmp = await tempDir('pc-manifest-target-');
});
afterAll(() => fsp.rm(tmp, { recursive: true, force: true }));

const silent = { info: () => {}, warn: () => {} };
let n = 0;

/** A project: package.json, the output folder with a page, an outside folder; returns their paths. */
async function project(outRel) {
  const root = path.join(tmp, `p${++n}`);
  const out = path.join(root, outRel);
  await writeTree(root, { 'package.json': '{ "name": "user-app" }\n', [`${outRel}/index.html`]: textOf(4000) });
  await fsp.mkdir(path.join(root, 'outside'));
  return { root, out };
}

/** Nuxt: the module's `nitro:build:public-assets` hook, then Nitro's `compiled`. */
async function nuxtBuild(root, out, options) {
  const hooks = {};
  nuxtModule(options, { options: { dev: false, rootDir: root }, hook: (name, fn) => void (hooks[name] = fn) });
  const nitroHooks = {};
  const nitro = { options: { output: { publicDir: out }, compressPublicAssets: false }, logger: silent,
    hooks: { hook: (name, fn) => void (nitroHooks[name] = fn) } };
  await hooks['nitro:build:public-assets'](nitro);
  await nitroHooks.compiled?.();
}

/** Astro: config setup and done, then `astro:build:done` on the folder. */
async function astroBuild(root, out, options) {
  const { hooks } = astro(options);
  hooks['astro:config:setup']({ config: { root: pathToFileURL(`${root}/`) }, updateConfig: () => {} });
  hooks['astro:config:done']({ config: { output: 'static' } });
  await hooks['astro:build:done']({ dir: pathToFileURL(`${out}/`), logger: silent });
}

/** SvelteKit: an adapter that writes the client folder and asks for its precompress. */
async function sveltekitBuild(root, out, options) {
  const adapter = { name: 'adapter-test', async adapt(builder) {
    builder.writeClient(out);
    await builder.compress(out);
  } };
  await precompressed(adapter, options).adapt({ log: silent, writeClient: () => [], writePrerendered: () => [] });
}

const ENTRIES = [['nuxt', '.output/public', nuxtBuild], ['astro', 'dist', astroBuild], ['sveltekit', 'build', sveltekitBuild]];

describe.each(ENTRIES)('%s', (name, outRel, build) => {
  test("a user's own file at the manifest's path is refused, the file kept as it was", async () => {
    const { root, out } = await project(outRel);
    const own = path.join(out, 'precompressor-manifest.json');
    await fsp.writeFile(own, '{"mine": true}\n');
    await expect(build(root, out, {})).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST' });
    expect(await fsp.readFile(own, 'utf8')).toBe('{"mine": true}\n');
  });

  test("a manifest path outside the output folder is refused, whatever is there (the project's package.json, nothing)", async () => {
    const { root, out } = await project(outRel);
    const pkg = path.relative(out, path.join(root, 'package.json'));
    await expect(build(root, out, { manifest: pkg })).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST' });
    expect(await fsp.readFile(path.join(root, 'package.json'), 'utf8')).toBe('{ "name": "user-app" }\n');
    const missing = path.relative(out, path.join(root, 'outside/m.json'));
    await expect(build(root, out, { manifest: missing })).rejects.toThrow(/outside the output folder/);
    expect(fs.readdirSync(path.join(root, 'outside'))).toEqual([]);
  });

  test('a symlink at the manifest path, or a folder on it that is a symlink to outside, is refused', async () => {
    const { root, out } = await project(outRel);
    const target = path.join(root, 'outside/target.json');
    await fsp.writeFile(target, '{"schema": 1}');
    await fsp.symlink(target, path.join(out, 'precompressor-manifest.json'));
    await expect(build(root, out, {})).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST' });
    expect(await fsp.readFile(target, 'utf8')).toBe('{"schema": 1}');
    await fsp.rm(path.join(out, 'precompressor-manifest.json'));
    await fsp.symlink(path.join(root, 'outside'), path.join(out, 'meta'));
    await expect(build(root, out, { manifest: 'meta/m.json' })).rejects.toThrow(/outside the output folder/);
    expect(fs.readdirSync(path.join(root, 'outside'))).toEqual(['target.json']);
  });

  test('a missing file or a manifest of ours inside the output folder is written, twice in a row', async () => {
    const { root, out } = await project(outRel);
    await build(root, out, { manifest: 'meta/site.json' });
    const first = JSON.parse(await fsp.readFile(path.join(out, 'meta/site.json'), 'utf8'));
    expect(first.files['index.html'].variants.br).toBeDefined();
    await build(root, out, { manifest: 'meta/site.json' });
    expect(JSON.parse(await fsp.readFile(path.join(out, 'meta/site.json'), 'utf8')).files['index.html']).toEqual(first.files['index.html']);
  });
});
