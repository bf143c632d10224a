/* global document */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { tempDir } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { expressServer, recordedBrowser } from '../helpers/servers.js';

// The proof of the site dictionary: a real Chromium opens the first page of a site served by
// serveStatic (Express, http://localhost: a secure context, where Chromium stores dictionaries),
// fetches the dictionary its Link header names, and gets the next pages as dcb/dcz against it.
// The DevTools protocol shows what went over the wire.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = fs.existsSync(CHROMIUM);
const ready = haveChromium && deltaEncoders().length > 0;
if (!haveChromium) console.warn(`site-dictionary browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
else if (!ready) console.warn(`site-dictionary browser test skipped: Node ${process.version} has no zstd or Brotli dictionary encoder`);

let work;
beforeAll(async () => {
  work = await tempDir('pc-sitedict-browser-');
});
afterAll(() => fsp.rm(work, { recursive: true, force: true }));

(ready ? test : test.skip)('Chromium loads the site dictionary on the first page and gets the next page as dcb/dcz against it', async () => {
  const dist = path.join(work, 'site');
  const pages = await writeSite(dist, 12);
  const report = await precompress(dist, { cache: false, deltas: false });
  expect(report.failures).toEqual([]);
  const manifest = JSON.parse(await fsp.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  const dictPath = manifest.siteDictionary.path;
  const dictKey = manifest.files[dictPath].dictionary.hash;
  const served = await expressServer(dist);
  /** @type {(() => void) | null} */
  let onDictionary = null;
  const { browser, page, net, complete } = await recordedBrowser(CHROMIUM, path.join(work, 'profile'), (r) => {
    if (r.url?.endsWith(`/${dictPath}`)) onDictionary?.();
  });
  try {
    const dictionaryLoaded = new Promise((resolve) => void (onDictionary = () => resolve(undefined)));

    await page.goto(`${served.origin}/`, { waitUntil: 'load' });
    const first = await complete((u) => u === `${served.origin}/`);
    expect(first?.headers?.link).toBe(`<./${dictPath}>; rel="compression-dictionary"`);
    await dictionaryLoaded;
    const dict = await complete((u) => u.endsWith(`/${dictPath}`));
    expect(dict?.headers?.['use-as-dictionary']).toBe('match="*", match-dest=("document")');
    expect(dict?.headers?.['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(dict?.headers?.['content-encoding']).toBe('br');

    // Chromium stores the dictionary once its response is complete: the next navigation that
    // carries Available-Dictionary is the one checked (each page of the site is a candidate).
    let hit = null;
    for (const p of pages.slice(1)) {
      net.clear();
      await page.goto(`${served.origin}/${p.rel}`, { waitUntil: 'load' });
      const nav = await complete((u) => u === `${served.origin}/${p.rel}`);
      if (nav.sent?.['available-dictionary'] !== undefined) {
        hit = { p, nav };
        break;
      }
    }
    expect(hit).not.toBeNull();
    const { p, nav } = /** @type {any} */ (hit);
    expect(nav.sent['available-dictionary']).toBe(`:${dictKey}:`);
    expect(nav.sent['accept-encoding']).toMatch(/\bdc[bz]\b/);
    const encoding = nav.headers['content-encoding'];
    expect(['dcb', 'dcz']).toContain(encoding);
    const variant = manifest.files[p.rel].deltas[dictKey][encoding];
    expect(nav.headers['content-length']).toBe(String(variant.size));
    expect(nav.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
    expect(served.seen.find((r) => r.url === `/${p.rel}`)?.headers['available-dictionary']).toBe(`:${dictKey}:`);
    // the page rendered from the decoded bytes
    expect(await page.$eval('h1', (el) => el.textContent)).toBe(p.title);
    expect(await page.evaluate(() => document.querySelectorAll('nav a').length)).toBe(pages.length);
    const br = manifest.files[p.rel].variants.br.size;
    expect(nav.wire).toBeLessThan(variant.size + 1500);
    expect(variant.size).toBeLessThan(br * 0.7);
    console.log(`browser (site dictionary): /${p.rel} over the wire ${nav.wire} B (${encoding} ${variant.size} B + head), br-11 ${br} B`);
  } finally {
    await browser.close();
    await served.close();
  }
}, 120_000);
