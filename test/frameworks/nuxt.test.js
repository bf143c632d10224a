import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { makeApp, freePort, unsupported, runIn, startServe, startProcess, get, manifestOf, expectHydratesWithBr, expectServed } from '../helpers/framework-app.js';

// Nuxt 4 (Nitro's node-server output), built for real from files written here, with the module
// 'precompressor/nuxt', and Nitro's own compressPublicAssets on to see the overlap handled.

const skip = unsupported(['nuxt', 'nitropack', 'vite']);
if (skip) console.warn(`Nuxt tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

const FILES = {
  'nuxt.config.js': "export default { modules: ['precompressor/nuxt'], telemetry: false, devtools: { enabled: false }, nitro: { compressPublicAssets: true }, routeRules: { '/about': { prerender: true } } };\n",
  'app/app.vue': '<template><NuxtPage /></template>\n',
  'app/pages/index.vue': '<script setup>\nconst n = ref(0);\n</script>\n<template><div><h1>Home v1</h1><button id="count" @click="n++">clicked {{ n }}</button><NuxtLink to="/about">about</NuxtLink></div></template>\n',
  'app/pages/about.vue': '<template><div><h1>About</h1></div></template>\n',
};

let root;
afterAll(() => root && fsp.rm(root, { recursive: true, force: true }));

maybe(".output/public is compressed before Nitro lists it: Nitro's server and precompressor serve send our br, never the manifest; compressPublicAssets is named as the overlap", async () => {
  root = await makeApp('nuxt', FILES, ['nuxt']);
  const { output, ms } = await runIn(root, 'nuxt/bin/nuxt.mjs', ['build']);
  console.log(`Nuxt: build ${Math.round(ms)} ms`);
  expect(output).toContain('set nitro: { compressPublicAssets: false } in nuxt.config to compress once');
  const pub = path.join(root, '.output/public');
  const m = manifestOf(pub);
  expect(m.files['about/index.html'].variants.br).toBeDefined();
  // Nitro's own .br/.gz were recognised as variants of ours (same bytes decoded) and are what the manifest lists
  for (const [rel, e] of Object.entries(m.files)) {
    for (const [enc, v] of Object.entries(/** @type {any} */ (e).variants)) {
      expect([rel, enc, fs.statSync(path.join(pub, `${rel}.${enc === 'gzip' ? 'gz' : enc}`)).size]).toEqual([rel, enc, /** @type {any} */ (v).size]);
    }
  }
  expect(fs.existsSync(path.join(root, '.output/.precompressor-manifest.json'))).toBe(false);
  const serverFiles = fs.readdirSync(path.join(root, '.output/server'), { recursive: true }).map(String);
  expect(serverFiles.filter((f) => /\.(br|gz)$|precompressor-manifest/.test(f))).toEqual([]);
  const js = /** @type {string} */ (Object.keys(m.files).filter((f) => /^_nuxt\/.*\.js$/.test(f)).sort((a, b) => m.files[b].size - m.files[a].size)[0]);

  const port = await freePort();
  const nitro = await startProcess(['.output/server/index.mjs'], { cwd: root, env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' } },
    (out) => (out.includes('Listening on') ? `http://127.0.0.1:${port}` : null));
  try {
    const home = await get(`${nitro.origin}/`);
    expect(home.status).toBe(200);
    expect(home.body.toString()).toContain('Home v1');
    expect(await expectServed(nitro.origin, pub, js)).toEqual({ home: { status: 200, encoding: undefined }, asset: { encoding: 'br', ours: true }, manifest: 404 });
    await expectHydratesWithBr(nitro.origin, '#count', 'Home v1');
  } finally {
    await nitro.stop();
  }

  const served = await startServe(pub);
  try {
    expect((await get(`${served.origin}/about/`, { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
    const asset = await get(`${served.origin}/${js}`, { 'accept-encoding': 'br' });
    expect(asset.body.equals(fs.readFileSync(path.join(pub, `${js}.br`)))).toBe(true);
    expect((await get(`${served.origin}/precompressor-manifest.json`)).status).toBe(404);
  } finally {
    await served.stop();
  }
});
