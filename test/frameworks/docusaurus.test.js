import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { deltaPath } from '../../lib/manifest/manifest.js';
import { decodeDelta } from '../helpers/delta.js';
import { runCommand } from '../helpers/spawn.js';
import { BIN, makeApp, heavyBuildSkip, projectEnv, runIn, startServe, get, manifestOf } from '../helpers/framework-app.js';

// Docusaurus 3 (preset-classic, docs only), built for real from files written here and compressed by
// the documented postbuild step (`docusaurus build && precompressor build`), then served.

const skip = heavyBuildSkip(['@docusaurus/core', '@docusaurus/preset-classic', 'react', 'react-dom']);
if (skip) console.warn(`Docusaurus tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

const intro = (version) => `---\nsidebar_position: 1\n---\n# Intro\n\nHello from the intro, ${version}.\n`;

const appFiles = () => ({
  // not "type": "module": webpack would take the generated route files as strict ESM (no require.resolveWeak)
  'package.json': JSON.stringify({ name: 'docusaurus', private: true }),
  'docusaurus.config.js': [
    'export default {',
    "  title: 'Minimal', url: 'https://example.com', baseUrl: '/', onBrokenLinks: 'throw',",
    "  presets: [['classic', { docs: {}, blog: false, theme: {} }]],",
    '};',
  ].join('\n'),
  'docs/intro.md': intro('version 1'),
  'docs/guide.md': '# Guide\n\nA guide page.\n',
  'src/pages/index.js': "import React from 'react';\nimport Layout from '@theme/Layout';\n" +
    'export default function Home() { return <Layout title="Home"><main><h1>Home</h1><a href="/docs/intro">docs</a></main></Layout>; }\n',
});

const apps = [];
afterAll(() => Promise.all(apps.map((a) => fsp.rm(a, { recursive: true, force: true }))));

const build = (root) => runIn(root, '@docusaurus/core/bin/docusaurus.mjs', ['build']);

/** `precompressor build` in the app: the postbuild step. */
async function postbuild(root) {
  const started = performance.now();
  const r = await runCommand(process.execPath, [BIN, 'build'], { cwd: root, env: projectEnv() });
  if (r.code !== 0) throw new Error(`precompressor build exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return { output: r.stdout + r.stderr, ms: performance.now() - started };
}

describe('Docusaurus', () => {
  maybe('postbuild: the summary counts only servable deltas (not index.html at folder URLs) and says how many; small hashed chunks are immutable', async () => {
    const root = await makeApp('docusaurus', appFiles());
    apps.push(root);
    const out = path.join(root, 'build');
    const b1 = await build(root);
    const c1 = await postbuild(root);
    const m1 = manifestOf(out);
    await fsp.cp(out, path.join(root, 'first'), { recursive: true }); // docusaurus build empties build/
    expect(Object.keys(m1.files)).toEqual(expect.arrayContaining(['index.html', 'docs/intro/index.html', 'docs/guide/index.html']));
    const small = Object.keys(m1.files).filter((f) => /^assets\/js\/.+\.[0-9a-f]{8}\.js$/.test(f) && m1.files[f].size < 1024);
    expect(small.length).toBeGreaterThan(0);
    for (const f of small) expect([f, m1.files[f].hashed]).toEqual([f, true]);

    const served = await startServe(out);
    try {
      const chunk = await get(`${served.origin}/${small[0]}`, { 'accept-encoding': 'br' });
      expect(chunk.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      const page = await get(`${served.origin}/docs/intro/`, { 'accept-encoding': 'br' });
      expect([page.status, page.headers['content-encoding'], page.headers['cache-control'], page.headers['use-as-dictionary']])
        .toEqual([200, 'br', 'public, max-age=0', undefined]);
      expect(zlib.brotliDecompressSync(page.body).toString()).toContain('Hello from the intro, version 1.');
    } finally {
      await served.stop();
    }

    if (deltaEncoders().length === 0) return;
    await fsp.writeFile(path.join(root, 'docs/intro.md'), intro('version 2'));
    const b2 = await build(root);
    const c2 = await postbuild(root);
    const m2 = manifestOf(out);
    const line = /deltas: (\d+) servable files? \((\d+) written\)(?:[^\n]*?; (\d+) more for unhashed names)?/.exec(c2.output);
    console.log(`Docusaurus: build ${Math.round(b1.ms)} / ${Math.round(b2.ms)} ms, precompressor ${Math.round(c1.ms)} / ${Math.round(c2.ms)} ms; ` +
      `${c2.output.match(/deltas: [^\n]*/)?.[0]}`);
    expect(line).not.toBeNull();
    const [, servable, , unhashed] = /** @type {RegExpExecArray} */ (line);
    const withDeltas = Object.keys(m2.files).filter((f) => Object.keys(m2.files[f].deltas ?? {}).length > 0);
    // servable: a hashed name with a pattern of its own, kept by a browser; pages are counted apart
    const hashed = withDeltas.filter((f) => m2.files[f].dictionary.hashed && !m2.files[f].dictionary.match.startsWith('*'));
    const pages = withDeltas.filter((f) => f.endsWith('.html'));
    expect(hashed.length).toBeGreaterThan(0);
    expect(Number(servable)).toBe(hashed.length);
    expect(pages.length).toBeGreaterThan(0);
    expect(Number(unhashed ?? 0)).toBe(pages.length);

    // A returning visitor's changed chunk, as counted: a delta against the version it holds
    const [file] = hashed;
    const [dictHash] = Object.keys(m2.files[file].deltas);
    const dict = Object.keys(m1.files).find((f) => m1.files[f].dictionary?.hash === dictHash);
    const served2 = await startServe(out);
    try {
      const r = await get(`${served2.origin}/${file}`, { 'accept-encoding': 'br, dcb, dcz', 'available-dictionary': `:${dictHash}:` });
      const encoding = /** @type {'dcb' | 'dcz'} */ (r.headers['content-encoding']);
      expect(['dcb', 'dcz']).toContain(encoding);
      expect(r.headers['content-length']).toBe(String(fs.statSync(path.join(out, deltaPath(file, dictHash, encoding))).size));
      const before = fs.readFileSync(path.join(root, 'first', /** @type {string} */ (dict)));
      expect(decodeDelta(encoding, r.body, before).equals(fs.readFileSync(path.join(out, file)))).toBe(true);
    } finally {
      await served2.stop();
    }
  }, 240_000);
});
