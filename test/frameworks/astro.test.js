import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { makeApp, unsupported, runIn, startServe, startProcess, originIn, get, manifestOf, expectAllPaired, expectHydratesWithBr, expectServed } from '../helpers/framework-app.js';

// Astro, static and server output (@astrojs/node), built for real from files written here, with
// the integration from 'precompressor/astro'.

const skip = unsupported(['astro', '@astrojs/node', 'vite']);
if (skip) console.warn(`Astro tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

/** A bundled script big enough for deploy deltas, `version` in its data. */
function wordsOf(version) {
  const words = Array.from({ length: 600 }, (_, i) => `${version}word${(i * 7919) % 1000}`);
  return `export const words = ${JSON.stringify(words)};\n`;
}

function appFiles(config) {
  return {
    'astro.config.mjs': `import { defineConfig } from 'astro/config';\nimport node from '@astrojs/node';\nimport precompressor from 'precompressor/astro';\nexport default defineConfig(${config});\n`,
    'src/pages/index.astro': "---\nimport Counter from '../components/Counter.astro';\n---\n<html><head><title>Home</title></head><body><h1>Home v1</h1><Counter /><a href=\"/about/\">about</a></body></html>\n",
    'src/pages/about.astro': '---\nexport const prerender = true;\n---\n<html><head><title>About</title></head><body><h1>About</h1></body></html>\n',
    'src/components/Counter.astro': [
      '<button id="count">clicked 0</button><ul id="words"></ul>',
      '<script>',
      "  import { words } from './words.js';",
      '  let n = 0;',
      "  const b = document.getElementById('count');",
      "  b.addEventListener('click', () => { n++; b.textContent = `clicked ${n}`; });",
      "  document.getElementById('words').innerHTML = words.map((w) => `<li>${w}</li>`).join('');",
      '</script>',
      '<style>button { color: rebeccapurple; padding: 1em; }</style>',
    ].join('\n'),
    'src/components/words.js': wordsOf('v1'),
  };
}

const apps = [];
afterAll(() => Promise.all(apps.map((a) => fsp.rm(a, { recursive: true, force: true }))));

const build = (root) => runIn(root, 'astro/bin/astro.mjs', ['build']);
const bundleOf = (m) => /** @type {string} */ (Object.keys(m.files).find((f) => /^_astro\/Counter\..*\.js$/.test(f)));

describe('Astro, static output', () => {
  maybe('dist/ is compressed after the pages are written: / is served, the script as br, the manifest is not; a second build pairs every changed bundle', async () => {
    const root = await makeApp('astro-static', appFiles('{ integrations: [precompressor()] }'), ['astro']);
    apps.push(root);
    const first = await build(root);
    expect(first.output).not.toContain('serve dist/client');
    const out = path.join(root, 'dist');
    const m1 = manifestOf(out);
    expect(Object.keys(m1.files)).toEqual(expect.arrayContaining(['index.html', 'about/index.html']));
    const js = bundleOf(m1);
    expect(m1.files[js].dictionary).toMatchObject({ dest: 'script', hashed: true });

    const served = await startServe(out);
    try {
      expect(await expectServed(served.origin, out, js)).toEqual({ home: { status: 200, encoding: 'br' }, asset: { encoding: 'br', ours: true }, manifest: 404 });
      await expectHydratesWithBr(served.origin, '#count', 'Home v1');
    } finally {
      await served.stop();
    }

    if (deltaEncoders().length === 0) return;
    await fsp.writeFile(path.join(root, 'src/components/words.js'), wordsOf('v2'));
    const second = await build(root);
    const p = expectAllPaired('Astro static', m1, manifestOf(out), [first.ms, second.ms]);
    expect(p.changed).toContain(bundleOf(manifestOf(out)));
  });
});

/** Start the app's server.mjs (Express: serveStatic, then Astro's handler); resolves with its origin. */
const startExpress = (root) => startProcess(['server.mjs'], { cwd: root }, originIn);

describe('Astro, server output (@astrojs/node, middleware mode)', () => {
  maybe('dist/client is compressed, dist/server untouched; Express with serveStatic before Astro\'s handler sends br and never the manifest', async () => {
    const config = "{ output: 'server', adapter: node({ mode: 'middleware' }), integrations: [precompressor()] }";
    const server = [
      "import express from 'express';",
      "import { serveStatic } from 'precompressor';",
      "import { handler } from './dist/server/entry.mjs';",
      'const app = express();',
      "app.use(serveStatic('dist/client'));",
      'app.use(handler);',
      "const s = app.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${s.address().port}`));",
    ].join('\n');
    const root = await makeApp('astro-server', { ...appFiles(config), 'server.mjs': server }, ['astro']);
    apps.push(root);
    const { output } = await build(root);
    expect(output).toContain("precompressor: serve dist/client with serveStatic before Astro's handler (@astrojs/node mode: 'middleware')");
    const client = path.join(root, 'dist/client');
    const m = manifestOf(client);
    expect(m.files['about/index.html'].variants.br).toBeDefined();
    const serverFiles = fs.readdirSync(path.join(root, 'dist/server'), { recursive: true }).map(String);
    expect(serverFiles.filter((f) => /\.(br|gz)$|precompressor-manifest/.test(f))).toEqual([]);

    const app = await startExpress(root);
    try {
      const home = await get(`${app.origin}/`);
      expect(home.status).toBe(200);
      expect(home.body.toString()).toContain('Home v1');
      expect(await expectServed(app.origin, client, bundleOf(m))).toEqual({ home: { status: 200, encoding: undefined }, asset: { encoding: 'br', ours: true }, manifest: 404 });
      expect((await get(`${app.origin}/about/`, { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
    } finally {
      await app.stop();
    }
  });
});
