// Frameworks benchmark (`npm run bench:frameworks`): the smallest app of each framework (SvelteKit +
// adapter-static, Astro static, Nuxt 4, React Router SSR) built for real, without the integration,
// with it (cold variant cache), again with the same sources (from the cache), then after one changed
// component: the bytes compressed and the changed bundles paired with their first version. Prints
// one JSON line per app (the table in docs/frameworks.md, "Measured").
//
//   node test/bench/frameworks.js
import fs from 'node:fs';
import path from 'node:path';
import { makeApp, runIn, manifestOf } from '../helpers/framework-app.js';

const words = (v, n) => JSON.stringify(Array.from({ length: n }, (_, i) => `${v}word${(i * 7919) % 1000}`));
const apps = {
  sveltekit: {
    nested: ['@sveltejs/kit'], bin: 'vite/bin/vite.js', args: ['build'], out: 'build',
    files: (on) => ({
      'vite.config.js': `import { sveltekit } from '@sveltejs/kit/vite';\nimport adapter from '@sveltejs/adapter-static';\nimport { precompressed } from 'precompressor/sveltekit';\nexport default { plugins: [sveltekit({ adapter: ${on ? 'precompressed(adapter())' : 'adapter()'} })] };\n`,
      'src/app.html': '<!doctype html>\n<html lang="en"><head><meta charset="utf-8" />%sveltekit.head%</head>\n<body><div style="display: contents">%sveltekit.body%</div></body></html>\n',
      'src/routes/+layout.js': 'export const prerender = true;\n',
      'src/routes/+page.svelte': `<script>\n let n = $state(0);\n const words = ${words('v1', 400)};\n</script>\n<h1>Home</h1><button onclick={() => n++}>clicked {n}</button><ul>{#each words as w}<li>{w}</li>{/each}</ul>\n`,
      'src/routes/about/+page.svelte': '<h1>About</h1>\n',
    }),
    edit: ['src/routes/+page.svelte', (t) => t.replaceAll('v1word', 'v2word')],
  },
  astro: {
    nested: ['astro'], bin: 'astro/bin/astro.mjs', args: ['build'], out: 'dist',
    files: (on) => ({
      'astro.config.mjs': `import { defineConfig } from 'astro/config';\nimport precompressor from 'precompressor/astro';\nexport default defineConfig({ integrations: [${on ? 'precompressor()' : ''}] });\n`,
      'src/pages/index.astro': "---\nimport Counter from '../components/Counter.astro';\n---\n<html><body><h1>Home</h1><Counter /></body></html>\n",
      'src/pages/about.astro': '<html><body><h1>About</h1></body></html>\n',
      'src/components/Counter.astro': "<ul id=\"w\"></ul>\n<script>\n import { words } from './words.js';\n document.getElementById('w').innerHTML = words.map((w) => `<li>${w}</li>`).join('');\n</script>\n",
      'src/components/words.js': `export const words = ${words('v1', 600)};\n`,
    }),
    edit: ['src/components/words.js', (t) => t.replaceAll('v1word', 'v2word')],
  },
  nuxt: {
    nested: ['nuxt'], bin: 'nuxt/bin/nuxt.mjs', args: ['build'], out: '.output/public',
    files: (on) => ({
      'nuxt.config.js': `export default { modules: [${on ? "'precompressor/nuxt'" : ''}], telemetry: false, devtools: { enabled: false }, routeRules: { '/about': { prerender: true } } };\n`,
      'app/app.vue': '<template><NuxtPage /></template>\n',
      'app/pages/index.vue': `<script setup>\nconst words = ${words('v1', 400)};\n</script>\n<template><ul><li v-for="w in words">{{ w }}</li></ul></template>\n`,
      'app/pages/about.vue': '<template><div><h1>About</h1></div></template>\n',
    }),
    edit: ['app/pages/index.vue', (t) => t.replaceAll('v1word', 'v2word')],
  },
  'react-router': {
    nested: ['@react-router/dev'], bin: '@react-router/dev/bin.cjs', args: ['build'], out: 'build/client',
    files: (on) => ({
      'package.json': JSON.stringify({ name: 'rr', private: true, type: 'module', dependencies: { isbot: '^5', react: '^19', 'react-dom': '^19', 'react-router': '8.4.0', '@react-router/node': '8.4.0' } }),
      'react-router.config.js': 'export default { ssr: true };\n',
      'vite.config.js': `import { reactRouter } from '@react-router/dev/vite';\nimport precompressor from 'precompressor/vite';\nexport default { plugins: [reactRouter()${on ? ', precompressor()' : ''}] };\n`,
      'app/root.jsx': "import { Links, Meta, Outlet, Scripts } from 'react-router';\nexport function Layout({ children }) { return (<html><head><Meta /><Links /></head><body>{children}<Scripts /></body></html>); }\nexport default function App() { return <Outlet />; }\n",
      'app/routes.js': "import { index } from '@react-router/dev/routes';\nexport default [index('routes/home.jsx')];\n",
      'app/routes/home.jsx': `const words = ${words('v1', 500)};\nexport default function Home() { return <ul>{words.map((w, i) => <li key={i}>{w}</li>)}</ul>; }\n`,
    }),
    edit: ['app/routes/home.jsx', (t) => t.replaceAll('v1word', 'v2word')],
  },
};

for (const [name, a] of Object.entries(apps)) {
  const off = await makeApp(`m-${name}-off`, a.files(false), a.nested);
  const on = await makeApp(`m-${name}-on`, a.files(true), a.nested);
  const t = {};
  t.off1 = (await runIn(off, a.bin, a.args)).ms;
  t.on1 = (await runIn(on, a.bin, a.args)).ms;
  const m1 = manifestOf(path.join(on, a.out));
  t.off2 = (await runIn(off, a.bin, a.args)).ms;
  t.on2 = (await runIn(on, a.bin, a.args)).ms; // same sources: every variant from the cache
  const file = path.join(on, a.edit[0]);
  fs.writeFileSync(file, a.edit[1](fs.readFileSync(file, 'utf8')));
  t.on3 = (await runIn(on, a.bin, a.args)).ms; // changed: deltas against the first build
  const m3 = manifestOf(path.join(on, a.out));
  const files = Object.values(m3.files);
  const raw = files.reduce((s, e) => s + e.size, 0);
  const br = files.reduce((s, e) => s + (e.variants.br?.size ?? e.size), 0);
  const changed = Object.entries(m3.files).filter(([rel]) => /\.(m?js|css)$/.test(rel) && !m1.files[rel]);
  const withFamily = changed.filter(([, e]) => e.dictionary);
  const withDelta = withFamily.filter(([, e]) => Object.values(e.deltas ?? {}).some((d) => Object.keys(d).length > 0));
  const deltaBytes = withDelta.map(([, e]) => Math.min(...Object.values(e.deltas).flatMap((d) => Object.values(d).map((v) => v.size))));
  const brOfThose = withDelta.map(([, e]) => e.variants.br.size);
  console.log(JSON.stringify({ name, ms: Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)])), files: files.length, raw, br,
    changedBundles: changed.length, withFamily: withFamily.length, withDelta: withDelta.length, deltaBytes: deltaBytes.reduce((x, y) => x + y, 0), brOfChanged: brOfThose.reduce((x, y) => x + y, 0) }));
  fs.rmSync(off, { recursive: true, force: true });
  fs.rmSync(on, { recursive: true, force: true });
}
