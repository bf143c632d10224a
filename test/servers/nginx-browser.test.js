/* global document */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { writeServerConfigs } from '../../lib/servers/write.js';
import { tempDir } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { recordedBrowser } from '../helpers/servers.js';
import { missing, startServer } from '../helpers/real-servers.js';

// A real Chromium through a stock nginx with only the generated files included: the first page's
// Link names the site dictionary, Chromium fetches and stores it, and a later page comes as dcb/dcz
// against it (http://localhost: a secure context, where Chromium stores dictionaries).

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const reason = !fs.existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
  : missing('nginx') ?? (deltaEncoders().length === 0 ? `Node ${process.version} has no zstd or Brotli dictionary encoder` : null);
if (reason) console.warn(`nginx browser test skipped: ${reason}`);

let work;
beforeAll(async () => {
  work = await tempDir('pc-nginx-browser-');
});
afterAll(() => fsp.rm(work, { recursive: true, force: true }));

(reason ? test.skip : test)('Chromium through nginx: the site dictionary on the first visit, a dcb/dcz page on the next', async () => {
  const dist = path.join(work, 'site');
  const conf = path.join(work, 'conf');
  const pages = await writeSite(dist, 12);
  const report = await precompress(dist, { cache: false, deltas: false });
  expect(report.failures).toEqual([]);
  await writeServerConfigs(dist, { out: conf, servers: ['nginx'] });
  const manifest = JSON.parse(await fsp.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  const dictPath = manifest.siteDictionary.path;
  const dictKey = manifest.files[dictPath].dictionary.hash;
  const nginx = await startServer('nginx', dist, conf, work);
  /** @type {(() => void) | null} */
  let onDictionary = null;
  const { browser, page, net, complete } = await recordedBrowser(CHROMIUM, path.join(work, 'profile'), (r) => {
    if (r.url?.endsWith(`/${dictPath}`)) onDictionary?.();
  });
  try {
    const dictionaryLoaded = new Promise((resolve) => void (onDictionary = () => resolve(undefined)));
    await page.goto(`${nginx.origin}/`, { waitUntil: 'load' });
    const first = await complete((u) => u === `${nginx.origin}/`);
    expect(first?.headers?.link).toBe(`</${dictPath}>; rel="compression-dictionary"`);
    await dictionaryLoaded;
    const dict = await complete((u) => u.endsWith(`/${dictPath}`));
    expect(dict?.headers?.['use-as-dictionary']).toBe('match="*", match-dest=("document")');
    expect(dict?.headers?.['cache-control']).toBe('public, max-age=31536000, immutable');

    // Chromium stores the dictionary once its response is complete: the first later navigation
    // that carries Available-Dictionary is the one checked.
    let hit = null;
    for (const p of pages.slice(1)) {
      net.clear();
      await page.goto(`${nginx.origin}/${p.rel}`, { waitUntil: 'load' });
      const nav = await complete((u) => u === `${nginx.origin}/${p.rel}`);
      if (nav.sent?.['available-dictionary'] !== undefined) {
        hit = { p, nav };
        break;
      }
    }
    expect(hit).not.toBeNull();
    const { p, nav } = /** @type {any} */ (hit);
    expect(nav.sent['available-dictionary']).toBe(`:${dictKey}:`);
    const encoding = nav.headers['content-encoding'];
    expect(['dcb', 'dcz']).toContain(encoding);
    expect(nav.headers['content-length']).toBe(String(manifest.files[p.rel].deltas[dictKey][encoding].size));
    expect(nav.headers.vary).toBe('Accept-Encoding, Available-Dictionary');
    // the page rendered from the decoded bytes
    expect(await page.$eval('h1', (el) => el.textContent)).toBe(p.title);
    expect(await page.evaluate(() => document.querySelectorAll('nav a').length)).toBe(pages.length);
    console.log(`browser through nginx: /${p.rel} as ${encoding}, ${nav.wire} B over the wire`);
  } finally {
    await browser.close();
    await nginx.close();
  }
}, 120_000);
