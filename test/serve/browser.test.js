/* global window, document */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { runCommand } from '../helpers/spawn.js';
import { tempDir } from '../helpers/tmp.js';
import { expressServer, recordedBrowser, startVitePreview } from '../helpers/servers.js';

// The proof of deploy deltas: a real Chromium loads a real Vite app built with preact 10.24.3, then
// the same app rebuilt with preact 10.25.0, in the same profile, from serveStatic on Express at
// http://localhost (a secure context, where Chromium stores dictionaries). The DevTools protocol
// shows what went over the wire.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = fs.existsSync(CHROMIUM);
const encoders = deltaEncoders();
const ready = haveChromium && encoders.length > 0;
if (!haveChromium) console.warn(`browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
else if (!ready) console.warn(`browser test skipped: Node ${process.version} cannot make deltas (no zstd or Brotli dictionary encoder)`);

const here = path.dirname(fileURLToPath(import.meta.url));
const VITE_RUN = path.join(here, '../helpers/vite-run.js');
const modules = path.resolve(here, '../../node_modules');
/** Fail-safe for Chromium to store the dictionary (milliseconds; it takes a few probes). */
const STORE_MS = 30_000;

let work;
let store;
beforeAll(async () => {
  work = await tempDir('pc-browser-');
  store = path.join(work, 'store');
});
afterAll(() => fsp.rm(work, { recursive: true, force: true }));

/** Write the app (its main.js names its version) and build it with Vite and the plugin. */
async function buildApp(root, version, preact) {
  await fsp.mkdir(path.join(root, 'src'), { recursive: true });
  await fsp.writeFile(path.join(root, 'index.html'), '<!doctype html><html><head><title>deltas</title></head><body><div id="app"></div><script type="module" src="/src/main.js"></script></body></html>\n');
  await fsp.writeFile(path.join(root, 'src/main.js'), [
    "import { h, render } from 'preact';",
    "import { useState } from 'preact/hooks';",
    'function App() {',
    '  const [n] = useState(41);',
    `  return h('p', { id: 'out' }, 'app ${version}, answer ' + (n + 1));`,
    '}',
    "render(h(App), document.getElementById('app'));",
    `window.__app = '${version}';`,
  ].join('\n'));
  const alias = { preact: path.join(modules, preact) };
  const job = { mode: 'build', root, plugin: { dictionaryStore: store }, config: { resolve: { alias }, logLevel: 'warn' } };
  const r = await runCommand(process.execPath, [VITE_RUN, JSON.stringify(job)]);
  const result = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
  if (!result.ok) throw new Error(`vite build failed: ${JSON.stringify(result.error)} ${r.stderr}`);
  return path.join(root, 'dist');
}

/** `vite preview` with the plugin, on `port` (0: any). */
const vitePreview = (dist, port) => startVitePreview(path.dirname(dist), port, { dictionaryStore: store });

/**
 * Deploy version 1 and load it; deploy version 2 on the same origin and load it in the same
 * profile; check from the DevTools protocol that the new bundle came as a delta and ran.
 * @param {string} name
 * @param {(dist: string, port: number) => Promise<import('../helpers/servers.js').Served>} serve
 */
async function scenario(name, serve) {
  const root = path.join(work, name);
  const dist = await buildApp(root, 'v1', 'preact-v1');
  let served = await serve(dist, 0);
  const { origin } = served;
  const { browser, page, net, complete } = await recordedBrowser(CHROMIUM, path.join(work, `profile-${name}`));
  try {
    await page.goto(`${origin}/`, { waitUntil: 'load' });
    expect(await page.evaluate(() => /** @type {any} */ (window).__app)).toBe('v1');
    const oldJs = fs.readdirSync(path.join(dist, 'assets')).find((n) => /^index-[^.]*\.js$/.test(n));
    const oldResponse = await complete((u) => u.endsWith(`/assets/${oldJs}`));
    expect(oldResponse?.headers?.['use-as-dictionary']).toBe('match="index-*.js", match-dest=("script")');
    expect(oldResponse?.headers?.['cache-control']).toBe('public, max-age=31536000, immutable');

    // Chromium stores the dictionary once the response is complete: wait until a script request
    // that matches the pattern carries Available-Dictionary (each probe is a 404, read once its
    // headers sent have come), up to a fail-safe far above the normal time.
    let stored = false;
    const deadline = Date.now() + STORE_MS;
    for (let i = 0; !stored && Date.now() < deadline; i++) {
      net.clear();
      await page.evaluate((src) => new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = src;
        s.onerror = s.onload = () => resolve(undefined);
        document.head.append(s);
      }), `/assets/index-probe${i}.js`);
      const probe = await complete((u) => u.endsWith(`/assets/index-probe${i}.js`), ['sent']);
      stored = probe.sent?.['available-dictionary'] !== undefined;
    }
    expect(stored).toBe(true);

    // Deploy version 2: Vite empties dist/; the dictionary store outside it holds version 1.
    await served.close();
    await buildApp(root, 'v2', 'preact-v2');
    served = await serve(dist, Number(new URL(origin).port));
    const manifest = JSON.parse(await fsp.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
    const newJs = fs.readdirSync(path.join(dist, 'assets')).find((n) => /^index-[^.]*\.js$/.test(n));
    expect(newJs).not.toBe(oldJs);
    const entry = manifest.files[`assets/${newJs}`];
    const [dictHash] = Object.keys(entry.deltas ?? {});
    expect(Object.keys(entry.deltas ?? {})).toHaveLength(1);

    net.clear();
    await page.goto(`${origin}/`, { waitUntil: 'load' });
    expect(await page.evaluate(() => /** @type {any} */ (window).__app)).toBe('v2');
    expect(await page.$eval('#out', (el) => el.textContent)).toBe('app v2, answer 42');

    const js = await complete((u) => u.endsWith(`/assets/${newJs}`));
    expect(js?.sent?.['available-dictionary']).toBe(`:${dictHash}:`);
    expect(js?.sent?.['accept-encoding']).toMatch(/\bdc[bz]\b/);
    const encoding = js?.headers?.['content-encoding'];
    expect(['dcb', 'dcz']).toContain(encoding);
    const delta = entry.deltas[dictHash][/** @type {string} */ (encoding)];
    expect(js?.headers?.['content-length']).toBe(String(delta.size));
    expect(js?.headers?.vary).toMatch(/(^|, )Accept-Encoding, Available-Dictionary$/); // vite preview adds Origin first
    if (served.seen.length > 0) {
      const req = served.seen.find((r) => r.url === `/assets/${newJs}`);
      expect(req?.headers['available-dictionary']).toBe(`:${dictHash}:`);
    }
    // bytes on the wire: the delta plus the response head, far below the Brotli 11 variant
    const br = entry.variants.br.size;
    expect(js?.wire).toBeGreaterThanOrEqual(delta.size);
    expect(js?.wire).toBeLessThan(delta.size + 1500);
    expect(delta.size * 4).toBeLessThan(br);
    console.log(`browser (${name}): ${newJs} over the wire ${js?.wire} B (${encoding} ${delta.size} B + head), br-11 ${br} B`);
  } finally {
    await browser.close();
    await served.close();
  }
}

(ready ? test : test.skip)('Chromium gets the new bundle as a delta against the old one from serveStatic on Express, and runs it', async () => {
  await scenario('express', expressServer);
}, 120_000);

(ready ? test : test.skip)('the same from `vite preview` with the plugin', async () => {
  await scenario('preview', vitePreview);
}, 120_000);
