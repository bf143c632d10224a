import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { makeApp, freePort, unsupported, runIn, startServe, startProcess, originIn, get, manifestOf, expectAllPaired, expectHydratesWithBr, expectServed } from '../helpers/framework-app.js';

// SvelteKit with adapter-static and adapter-node, built for real from files written here, with
// `precompressed(adapter())` from 'precompressor/sveltekit'.

const skip = unsupported(['@sveltejs/kit', '@sveltejs/vite-plugin-svelte', '@sveltejs/adapter-static', '@sveltejs/adapter-node', 'svelte', 'vite']);
if (skip) console.warn(`SvelteKit tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

/** A page big enough for deploy deltas (its chunk is over deltaMinSize), `version` in its text. */
function pageOf(version) {
  const words = Array.from({ length: 400 }, (_, i) => `word${(i * 7919) % 1000}`);
  return `<script>\n  let n = $state(0);\n  const words = ${JSON.stringify(words)};\n</script>\n` +
    `<h1>Home ${version}</h1>\n<button onclick={() => n++}>clicked {n}</button>\n<a href="/about">about</a>\n` +
    '<ul>{#each words as w, i}<li class:odd={i % 2}>{w}</li>{/each}</ul>\n';
}

function appFiles(adapter, prerender) {
  return {
    'vite.config.js': [
      "import { sveltekit } from '@sveltejs/kit/vite';",
      `import adapter from '@sveltejs/${adapter}';`,
      "import { precompressed } from 'precompressor/sveltekit';",
      'export default { logLevel: "info", plugins: [sveltekit({ adapter: precompressed(adapter()) })] };',
    ].join('\n'),
    'src/app.html': '<!doctype html>\n<html lang="en"><head><meta charset="utf-8" />%sveltekit.head%</head>\n<body><div style="display: contents">%sveltekit.body%</div></body></html>\n',
    'src/routes/+layout.js': `export const prerender = ${prerender};\n`,
    'src/routes/+page.svelte': pageOf('v1'),
    'src/routes/about/+page.svelte': '<h1>About</h1><p>About this app.</p>\n',
    'src/routes/about/+page.js': 'export const prerender = true;\n',
  };
}

const apps = [];
afterAll(() => Promise.all(apps.map((a) => fsp.rm(a, { recursive: true, force: true }))));

const build = (root) => runIn(root, 'vite/bin/vite.js', ['build']);

describe('SvelteKit + adapter-static', () => {
  maybe('build/ is compressed after the adapter wrote it: / is served, assets as br, the manifest is not; a second build pairs every changed bundle', async () => {
    const root = await makeApp('sveltekit-static', appFiles('adapter-static', true), ['@sveltejs/kit']);
    apps.push(root);
    const first = await build(root);
    const out = path.join(root, 'build');
    const m1 = manifestOf(out);
    expect(Object.keys(m1.files)).toEqual(expect.arrayContaining(['index.html', 'about.html']));
    expect(m1.files['index.html'].variants.br).toBeDefined();
    expect(first.output).toMatch(/precompressor: \d+ compressed/);

    const served = await startServe(out);
    try {
      const js = /** @type {string} */ (Object.keys(m1.files).find((f) => /^_app\/immutable\/entry\/app\.[\w-]{8}\.js$/.test(f)));
      expect(await expectServed(served.origin, out, js)).toEqual({ home: { status: 200, encoding: 'br' }, asset: { encoding: 'br', ours: true }, manifest: 404 });
      await expectHydratesWithBr(served.origin, 'button', 'Home v1');
    } finally {
      await served.stop();
    }

    if (deltaEncoders().length === 0) return;
    await fsp.writeFile(path.join(root, 'src/routes/+page.svelte'), pageOf('v2'));
    const second = await build(root);
    expectAllPaired('SvelteKit adapter-static', m1, manifestOf(out), [first.ms, second.ms]);
  });
});

/** Start adapter-node's own server (`node build`); resolves once it listens. */
function startNodeServer(root, port) {
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1' };
  return startProcess(['build'], { cwd: root, env }, (out) => (out.includes('Listening on') ? `http://127.0.0.1:${port}` : null));
}

describe('SvelteKit + adapter-node', () => {
  maybe("its precompress is done by precompressor: adapter-node's server sends our .br, never the manifest; build/server untouched", async () => {
    const express = [
      "import express from 'express';",
      "import { serveStatic } from 'precompressor';",
      "import { handler } from './build/handler.js';",
      'const app = express();',
      "app.use(serveStatic('build/client'));",
      "app.use(serveStatic('build/prerendered', { extensions: ['html'] }));",
      'app.use(handler);',
      "const s = app.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${s.address().port}`));",
    ].join('\n');
    const root = await makeApp('sveltekit-node', { ...appFiles('adapter-node', false), 'server.mjs': express }, ['@sveltejs/kit']);
    apps.push(root);
    const { output } = await build(root);
    expect(output).toContain("@sveltejs/adapter-node's precompress is done by precompressor");
    const client = path.join(root, 'build/client');
    const m = manifestOf(client);
    expect(manifestOf(path.join(root, 'build/prerendered')).files['about.html'].variants.br).toBeDefined();
    const server = fs.readdirSync(path.join(root, 'build/server'), { recursive: true }).map(String);
    expect(server.filter((f) => /\.(br|gz)$|precompressor-manifest/.test(f))).toEqual([]);

    const node = await startNodeServer(root, await freePort());
    try {
      const home = await get(`${node.origin}/`);
      expect(home.status).toBe(200);
      expect(home.body.toString()).toContain('Home v1');
      const js = /** @type {string} */ (Object.keys(m.files).find((f) => /^_app\/immutable\/entry\/app\.[\w-]{8}\.js$/.test(f)));
      expect(await expectServed(node.origin, client, js)).toEqual({ home: { status: 200, encoding: undefined }, asset: { encoding: 'br', ours: true }, manifest: 404 });
      expect((await get(`${node.origin}/about`, { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
    } finally {
      await node.stop();
    }
    // The Express set-up of docs/frameworks.md: serveStatic for both folders, then adapter-node's handler
    const app = await startProcess(['server.mjs'], { cwd: root }, originIn);
    try {
      const js = /** @type {string} */ (Object.keys(m.files).find((f) => /^_app\/immutable\/entry\/app\.[\w-]{8}\.js$/.test(f)));
      expect(await expectServed(app.origin, client, js)).toEqual({ home: { status: 200, encoding: undefined }, asset: { encoding: 'br', ours: true }, manifest: 404 });
      const about = await get(`${app.origin}/about`, { 'accept-encoding': 'br' });
      expect([about.status, about.headers['content-encoding'], about.body.equals(fs.readFileSync(path.join(root, 'build/prerendered/about.html.br')))]).toEqual([200, 'br', true]);
    } finally {
      await app.stop();
    }
  });
});

describe('SvelteKit with the plain Vite plugin', () => {
  maybe('says to wrap the adapter and compresses nothing (it ran before the adapter wrote build/: / was a 404)', async () => {
    const files = appFiles('adapter-static', true);
    files['vite.config.js'] = [
      "import { sveltekit } from '@sveltejs/kit/vite';",
      "import adapter from '@sveltejs/adapter-static';",
      "import precompressor from 'precompressor/vite';",
      'export default { plugins: [sveltekit({ adapter: adapter() }), precompressor()] };',
    ].join('\n');
    const root = await makeApp('sveltekit-plain', files, ['@sveltejs/kit']);
    apps.push(root);
    const { output } = await build(root);
    expect(output).toContain("wrap the adapter instead: sveltekit({ adapter: precompressed(adapter()) }) with precompressed from 'precompressor/sveltekit'");
    expect(fs.existsSync(path.join(root, '.svelte-kit/output/client/precompressor-manifest.json'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'build/precompressor-manifest.json'))).toBe(false);
  });
});
