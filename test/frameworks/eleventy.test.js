import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { runCommand } from '../helpers/spawn.js';
import { makeApp, unsupported, runIn, startServe, get, manifestOf, projectEnv, BIN } from '../helpers/framework-app.js';
import { expectVariant, expectDelta } from '../helpers/served-variants.js';
import { eleventyFiles, eleventyEdit } from '../helpers/recipe-apps.js';

// Eleventy 3 built for real (test/helpers/recipe-apps.js), then the recipe of docs/frameworks.md:
// `eleventy && precompressor _site`, served by `precompressor serve _site`. A light build (under a
// second): it runs on every Node Eleventy supports.

const skip = unsupported(['@11ty/eleventy']);
if (skip) console.warn(`Eleventy tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

const apps = [];
afterAll(() => Promise.all(apps.map((a) => fsp.rm(a, { recursive: true, force: true }))));

const NAV = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** `eleventy`, then the recipe's postbuild step; resolves with the CLI's summary. */
async function buildAndCompress(root) {
  await runIn(root, '@11ty/eleventy/cmd.cjs', []);
  const r = await runCommand(process.execPath, [BIN, '_site'], { cwd: root, env: projectEnv() });
  if (r.code !== 0) throw new Error(`precompressor _site exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

maybe('eleventy && precompressor _site: pages and CSS as exact br/gzip, /about → 301 → /about/, and an edited page is sent against the site dictionary', async () => {
  const root = await makeApp('eleventy', eleventyFiles());
  apps.push(root);
  const out = path.join(root, '_site');
  await buildAndCompress(root);
  const m1 = manifestOf(out);
  expect(Object.keys(m1.files)).toEqual(expect.arrayContaining(['index.html', 'about/index.html', 'docs/page-0/index.html', 'style.css']));
  const encoders = deltaEncoders();
  const dictRel = m1.siteDictionary?.path;
  if (encoders.length > 0) expect(dictRel).toMatch(/^precompressor-dictionary\.[0-9a-f]{16}\.dict$/);

  const served = await startServe(out);
  try {
    // folder URLs: Eleventy writes about/index.html, so /about is a redirect to the folder, as on static hosts
    const bare = await get(`${served.origin}/about`, { accept: NAV, 'accept-encoding': 'br' });
    expect([bare.status, bare.headers.location]).toEqual([301, '/about/']);
    for (const encoding of /** @type {const} */ (['br', 'gzip'])) {
      const about = await expectVariant(served.origin, out, 'about/index.html', encoding, '/about/', { accept: NAV });
      expect(about.headers['cache-control']).toBe('public, max-age=0'); // no hash in a page's name
      expect(about.headers['use-as-dictionary']).toBeUndefined();
      if (dictRel) expect(about.headers.link).toBe(`<../${dictRel}>; rel="compression-dictionary"`);
      await expectVariant(served.origin, out, 'index.html', encoding, '/', { accept: NAV });
      const css = await expectVariant(served.origin, out, 'style.css', encoding);
      expect(css.headers['cache-control']).toBe('public, max-age=0');
    }
    if (dictRel) {
      const d = await expectVariant(served.origin, out, dictRel, 'br');
      expect([d.headers['use-as-dictionary'], d.headers['cache-control']]).toEqual(['match="*", match-dest=("document")', 'public, max-age=31536000, immutable']);
    }
  } finally {
    await served.stop();
  }

  if (!dictRel) return console.warn(`Eleventy site dictionary skipped: Node ${process.version} has no dictionary encoder`);
  const dict = fs.readFileSync(path.join(out, dictRel));
  await fsp.appendFile(path.join(root, 'about.md'), eleventyEdit);
  const summary = await buildAndCompress(root);
  // a page's previous version is no dictionary a browser keeps (max-age=0): the delta is not counted
  expect(summary).toMatch(/deltas: 0 servable files \(\d+ written\); 1 more for unhashed names/);
  const m2 = manifestOf(out);
  expect(m2.siteDictionary.path).toBe(dictRel); // kept: returning visitors hold it
  expect(m2.files['about/index.html'].hash).not.toBe(m1.files['about/index.html'].hash);
  const again = await startServe(out);
  try {
    const got = await expectDelta(again.origin, out, 'about/index.html', dict, encoders, { accept: NAV }, '/about/');
    expect(got.bytes).toBe(m2.files['about/index.html'].deltas[m2.files[dictRel].dictionary.hash][got.encoding].size);
  } finally {
    await again.stop();
  }
});
