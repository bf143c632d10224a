// Frameworks benchmark (`npm run bench:frameworks`): the smallest app of each framework (SvelteKit +
// adapter-static, Astro static, Nuxt 4, React Router SSR, webpack 5, Rspack, Next.js export, Docusaurus,
// Angular, Eleventy) built for real, without precompressor, with it (its integration, plugin or the
// documented postbuild CLI; cold variant cache), both again with the same sources (ours from the cache),
// then after one changed module: the bytes compressed and the changed bundles paired with their first
// version. A framework whose packages are missing or exclude this Node is skipped, with the reason.
// Prints one JSON line per app and a Markdown table (docs/frameworks.md, "Measured").
//
//   node test/bench/frameworks.js [app,app,...]
import fs from 'node:fs';
import path from 'node:path';
import { makeApp, manifestOf, unsupported, BIN, projectEnv } from '../helpers/framework-app.js';
import { runCommand } from '../helpers/spawn.js';
import { markdownTable } from './util.js';
import { ANGULAR_WORKSPACE, ANGULAR_OUT, angularFiles, eleventyFiles, eleventyEdit, wordsModule } from '../helpers/recipe-apps.js';

const words = (v, n) => JSON.stringify(Array.from({ length: n }, (_, i) => `${v}word${(i * 7919) % 1000}`));
const apps = {
  sveltekit: {
    packages: ['@sveltejs/kit', 'vite'], nested: ['@sveltejs/kit'], cmd: ['vite/bin/vite.js', 'build'], out: 'build',
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
    packages: ['astro'], nested: ['astro'], cmd: ['astro/bin/astro.mjs', 'build'], out: 'dist',
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
    packages: ['nuxt', 'nitropack'], nested: ['nuxt'], cmd: ['nuxt/bin/nuxt.mjs', 'build'], out: '.output/public',
    files: (on) => ({
      'nuxt.config.js': `export default { modules: [${on ? "'precompressor/nuxt'" : ''}], telemetry: false, devtools: { enabled: false }, routeRules: { '/about': { prerender: true } } };\n`,
      'app/app.vue': '<template><NuxtPage /></template>\n',
      'app/pages/index.vue': `<script setup>\nconst words = ${words('v1', 400)};\n</script>\n<template><ul><li v-for="w in words">{{ w }}</li></ul></template>\n`,
      'app/pages/about.vue': '<template><div><h1>About</h1></div></template>\n',
    }),
    edit: ['app/pages/index.vue', (t) => t.replaceAll('v1word', 'v2word')],
  },
  'react-router': {
    packages: ['@react-router/dev'], nested: ['@react-router/dev'], cmd: ['@react-router/dev/bin.cjs', 'build'], out: 'build/client',
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
  webpack: bundled('webpack', ['webpack']),
  rspack: bundled('rspack', ['@rspack/core']),
  next: {
    packages: ['next', 'react', 'react-dom'], cmd: ['next/dist/bin/next', 'build'], out: 'out', post: true,
    previous: 'last-deploy', // the recipe: hash-only chunks are paired by content with the deploy kept beside
    files: () => ({
      'next.config.mjs': "export default { output: 'export', turbopack: { root: '/' } };\n", // node_modules are links out of the app
      'app/layout.js': 'export default function RootLayout({ children }) { return <html lang="en"><body>{children}</body></html>; }\n',
      'app/page.js': "import Words from './words';\nexport default function Home() { return <main><h1>Home</h1><Words /></main>; }\n",
      'app/words.js': `'use client';\nimport { useState } from 'react';\nconst words = ${words('v1', 400)};\nexport default function Words() {\n  const [n, setN] = useState(0);\n  return <div><button onClick={() => setN(n + 1)}>clicked {n}</button><ul>{words.map((w, i) => <li key={i}>{w}</li>)}</ul></div>;\n}\n`,
      'app/about/page.js': 'export default function About() { return <main><h1>About</h1></main>; }\n',
    }),
    // one string: chunks named only by a hash are paired by content (shingles), which a rename of every word defeats
    edit: ['app/words.js', (t) => t.replace('clicked {n}', 'clicked {n} times')],
  },
  docusaurus: {
    packages: ['@docusaurus/core', '@docusaurus/preset-classic'], cmd: ['@docusaurus/core/bin/docusaurus.mjs', 'build'], out: 'build', post: true,
    files: () => ({
      'package.json': JSON.stringify({ name: 'docusaurus', private: true }), // CommonJS: Docusaurus' generated route files
      'docusaurus.config.js': "export default { title: 'Minimal', url: 'https://example.com', baseUrl: '/', presets: [['classic', { docs: {}, blog: false, theme: {} }]] };\n",
      'docs/intro.md': `# Intro\n\n${JSON.parse(words('v1', 300)).join(' ')}\n`,
      'docs/guide.md': '# Guide\n\nA guide page.\n',
      'src/pages/index.js': "import React from 'react';\nimport Layout from '@theme/Layout';\n" +
        'export default function Home() { return <Layout title="Home"><main><h1>Home</h1><a href="/docs/intro">docs</a></main></Layout>; }\n',
    }),
    edit: ['docs/intro.md', (t) => t.replaceAll('v1word', 'v2word')],
  },
  angular: {
    packages: ['@angular/cli', `${ANGULAR_WORKSPACE}/node_modules/@angular/build`], nested: [ANGULAR_WORKSPACE],
    cmd: ['@angular/cli/bin/ng.js', 'build'], out: ANGULAR_OUT, post: true,
    files: angularFiles, edit: ['src/words.ts', () => wordsModule('v2')],
  },
  eleventy: {
    packages: ['@11ty/eleventy'], cmd: ['@11ty/eleventy/cmd.cjs'], out: '_site', post: true,
    files: eleventyFiles, edit: ['about.md', (t) => t + eleventyEdit],
  },
};

/**
 * A webpack 5 or Rspack app (React, a module of words, a lazy chunk) built by a script through the
 * bundler's Node API, with `new PrecompressorPlugin()` when on.
 * @param {'webpack' | 'rspack'} bundler
 * @param {string[]} packages
 */
function bundled(bundler, packages) {
  const build = (on) => `import path from 'node:path';\n${on ? "import PrecompressorPlugin from 'precompressor/webpack';\n" : ''}` +
    `const create = ${bundler === 'rspack' ? "(await import('@rspack/core')).rspack" : "(await import('webpack')).default"};\n` +
    "const compiler = create({ mode: 'production', context: process.cwd(), entry: './src/index.js', devtool: false,\n" +
    "  output: { path: path.resolve('dist'), filename: '[name].[contenthash].js', chunkFilename: '[name].[contenthash].js', clean: true },\n" +
    `  plugins: [${on ? 'new PrecompressorPlugin()' : ''}] });\n` +
    "compiler.run((err, stats) => {\n  if (err || stats.hasErrors()) { console.error(err ?? stats.toString('errors-only')); process.exitCode = 1; }\n  compiler.close(() => {});\n});\n";
  return {
    packages: [...packages, 'react', 'react-dom'], cmd: ['build.mjs'], out: 'dist', local: true,
    files: (on) => ({
      'build.mjs': build(on),
      'src/index.js': "import { createElement } from 'react';\nimport { createRoot } from 'react-dom/client';\nimport { words } from './words.js';\n" +
        "import('./lazy.js').then((m) => m.run());\ncreateRoot(document.getElementById('app')).render(createElement('ul', null, words.map((w, i) => createElement('li', { key: i }, w))));\n",
      'src/words.js': wordsModule('v1'),
      'src/lazy.js': `export const run = () => console.log(${words('lazy', 600)}.length);\n`,
    }),
    edit: ['src/words.js', () => wordsModule('v2')],
  };
}

/**
 * Build the app once (`post`: then the postbuild CLI on its output folder when on, with `--previous` the
 * folder kept from the build before where the recipe says so); the wall time, ms.
 * @param {string} root
 * @param {any} a
 * @param {boolean} on
 */
async function buildOnce(root, a, on) {
  const started = performance.now();
  const script = a.local ? a.cmd[0] : path.join('node_modules', a.cmd[0]);
  const steps = [[script, ...a.cmd.slice(1)]];
  const previous = a.previous && fs.existsSync(path.join(root, a.previous)) ? ['--previous', a.previous] : [];
  if (on && a.post) steps.push([BIN, a.out, ...previous]);
  for (const args of steps) {
    const r = await runCommand(process.execPath, args, { cwd: root, env: projectEnv() });
    if (r.code !== 0) throw new Error(`${args.join(' ')} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  }
  const ms = performance.now() - started;
  if (on && a.previous) { // deployed: kept for the next build (not timed)
    fs.rmSync(path.join(root, a.previous), { recursive: true, force: true });
    fs.cpSync(path.join(root, a.out), path.join(root, a.previous), { recursive: true });
  }
  return ms;
}

const only = process.argv[2]?.split(',');
const rows = [];
for (const [name, a] of Object.entries(apps)) {
  if (only && !only.includes(name)) continue;
  const skip = unsupported(a.packages);
  if (skip) {
    console.log(JSON.stringify({ name, skipped: skip }));
    continue;
  }
  const off = await makeApp(`m-${name}-off`, a.files(false), a.nested);
  const on = await makeApp(`m-${name}-on`, a.files(true), a.nested);
  const t = {};
  t.off1 = await buildOnce(off, a, false);
  t.on1 = await buildOnce(on, a, true);
  const m1 = manifestOf(path.join(on, a.out));
  t.off2 = await buildOnce(off, a, false);
  t.on2 = await buildOnce(on, a, true); // same sources: every variant from the cache
  const file = path.join(on, a.edit[0]);
  fs.writeFileSync(file, a.edit[1](fs.readFileSync(file, 'utf8')));
  t.on3 = await buildOnce(on, a, true); // changed: deltas against the first build
  const m3 = manifestOf(path.join(on, a.out));
  const files = Object.values(m3.files);
  const sum = (f) => files.reduce((s, e) => s + f(e), 0);
  const changed = Object.entries(m3.files).filter(([rel]) => /\.(m?js|css)$/.test(rel) && !m1.files[rel]);
  const withFamily = changed.filter(([, e]) => e.dictionary);
  const withDelta = withFamily.filter(([, e]) => Object.values(e.deltas ?? {}).some((d) => Object.keys(d).length > 0));
  const deltaBytes = withDelta.map(([, e]) => Math.min(...Object.values(e.deltas).flatMap((d) => Object.values(d).map((v) => v.size))));
  const brOfThose = withDelta.map(([, e]) => e.variants.br.size);
  const row = { name, ms: Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)])), files: files.length,
    raw: sum((e) => e.size), br: sum((e) => e.variants.br?.size ?? e.size), gz: sum((e) => e.variants.gzip?.size ?? e.size),
    changedBundles: changed.length, withFamily: withFamily.length, withDelta: withDelta.length,
    deltaBytes: deltaBytes.reduce((x, y) => x + y, 0), brOfChanged: brOfThose.reduce((x, y) => x + y, 0) };
  console.log(JSON.stringify(row));
  rows.push(row);
  fs.rmSync(off, { recursive: true, force: true });
  fs.rmSync(on, { recursive: true, force: true });
}
const n = (x) => x.toLocaleString('en-US');
console.log(markdownTable(['app', 'first build without / with, ms', 'again without / with (cached), ms', 'files', 'raw B', 'br B', 'gzip B',
  'changed bundles', 'with a delta', 'delta B (br B of the same)'],
rows.map((r) => [r.name, `${n(r.ms.off1)} / ${n(r.ms.on1)}`, `${n(r.ms.off2)} / ${n(r.ms.on2)}`, r.files, n(r.raw), n(r.br), n(r.gz),
  r.changedBundles, r.withDelta, r.withDelta ? `${n(r.deltaBytes)} (${n(r.brOfChanged)})` : '—'])));
