import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';
import { runCommand } from '../helpers/spawn.js';
import { request } from '../helpers/serve-site.js';
import { startVitePreview } from '../helpers/servers.js';
import { tempDir } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';

// The site dictionary through the Vite plugin: a real multi-page `vite build` makes it, and
// `vite preview` (serveStatic inside) links it and answers pages against it.

const VITE_RUN = fileURLToPath(new URL('../helpers/vite-run.js', import.meta.url));
const encoders = deltaEncoders();
const it = encoders.length > 0 ? test : test.skip;

let root;
beforeAll(async () => {
  root = await tempDir('pc-vite-sitedict-');
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));

it('vite build makes the site dictionary and the pages against it; vite preview serves them', async () => {
  const pages = await writeSite(root, 8);
  const input = Object.fromEntries(pages.map((p) => [p.rel.replace(/\W/g, '_'), path.join(root, p.rel)]));
  const job = { mode: 'build', root, plugin: { dictionaryStore: path.join(root, 'store') }, config: { logLevel: 'warn', build: { rollupOptions: { input } } } };
  const r = await runCommand(process.execPath, [VITE_RUN, JSON.stringify(job)]);
  const result = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
  expect(result).toMatchObject({ ok: true });
  expect(result.lines.some((l) => /^precompressor: site dictionary: .* 8 pages after it at /.test(l))).toBe(true);
  const dist = path.join(root, 'dist');
  const m = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  const rel = m.siteDictionary.path;
  const dict = await fs.readFile(path.join(dist, rel));
  const key = m.files[rel].dictionary.hash;
  const served = await startVitePreview(root, 0, { dictionaryStore: path.join(root, 'store') });
  try {
    const page = pages[2].rel;
    const home = await request(served.port, '/', { headers: { 'accept-encoding': 'br' } });
    expect(home.headers.link).toBe(`<./${rel}>; rel="compression-dictionary"`);
    const d = await request(served.port, `/${rel}`, { headers: { 'accept-encoding': 'br' } });
    expect(d.headers['use-as-dictionary']).toBe('match="*", match-dest=("document")');
    const res = await request(served.port, `/${page}`, { headers: { 'accept-encoding': `br, ${encoders.join(', ')}`, 'available-dictionary': `:${key}:` } });
    const enc = /** @type {'dcb' | 'dcz'} */ (res.headers['content-encoding']);
    expect(encoders).toContain(enc);
    expect(res.headers['content-length']).toBe(String(m.files[page].deltas[key][enc].size));
    expect(res.headers.vary).toMatch(/(^|, )Accept-Encoding, Available-Dictionary$/);
    expect(decodeDelta(enc, res.body, dict)).toEqual(await fs.readFile(path.join(dist, page)));
  } finally {
    await served.close();
  }
}, 120_000);
