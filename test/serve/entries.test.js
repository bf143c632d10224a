import fs from 'node:fs/promises';
import path from 'node:path';
import http from 'node:http';
import { Site } from '../../lib/serve/site/site.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { normalizeServeOptions } from '../../lib/serve/http/options.js';
import { manifestText } from '../../lib/manifest/manifest.js';
import { hashOf, listen } from '../helpers/serve-site.js';
import { tempDir } from '../helpers/tmp.js';

// The entries a Site keeps built (lib/serve/site/entries.js) at their real cap: the cap holds under a
// request mix larger than it, and the policy is the body cache's (lib/serve/bodies/clock.js), so an entry
// asked for all along outlives a scan of the others, which an oldest-first policy forgets.

/** lib/serve/site/entries.js MAX_ENTRIES (docs/guarantees.md names it). */
const CAP = 16384;

/** More paths than the cap, in folders of 1,000. */
const COLD = Array.from({ length: CAP + 500 }, (_, i) => `c${Math.floor(i / 1000)}/${i}.txt`);

let dir;
beforeAll(async () => {
  dir = await tempDir('pc-entries-');
  await writeListed(['hot.txt', 'x.txt', ...COLD]);
}, 60_000);
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

/**
 * Write `rels` (each a small file of its own bytes) and a manifest that lists them, without variants.
 * @param {string[]} rels
 */
async function writeListed(rels) {
  const files = {};
  const folders = new Set(rels.map((r) => path.posix.dirname(r)));
  for (const f of folders) await fs.mkdir(path.join(dir, f), { recursive: true });
  for (let i = 0; i < rels.length; i += 256) {
    await Promise.all(rels.slice(i, i + 256).map(async (rel) => {
      const buf = Buffer.from(`${rel}\n`);
      await fs.writeFile(path.join(dir, rel), buf);
      const st = await fs.stat(path.join(dir, rel));
      files[rel] = { size: buf.length, mtimeMs: st.mtimeMs, hash: hashOf(buf), variants: {}, skipped: 'not-smaller' };
    }));
  }
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));
  const manifest = { schema: 1, tool: 'precompressor@test', settings: { encodings: ['br'] }, generatedAt: 'now', files: sorted };
  await fs.writeFile(path.join(dir, 'precompressor-manifest.json'), [...manifestText(manifest)].join(''));
}

test('at most 16,384 entries stay built under more paths than that; one asked for all along outlives a scan of the others', async () => {
  const cold = COLD;
  const site = new Site(normalizeServeOptions(dir, { watch: false }));
  try {
    const hot = await site.find('hot.txt');
    expect(hot).toMatchObject({ rel: 'hot.txt', stale: false });
    for (let i = 0; i < cold.length; i += 16) {
      const got = await Promise.all(cold.slice(i, i + 16).map((rel) => site.find(rel)));
      expect(got.every((e, k) => e?.rel === cold[i + k] && !e.stale)).toBe(true);
      // the hot entry, asked for now and then: already built, the very same object
      if (i % 512 === 0) expect(site.find('hot.txt')).toBe(hot);
      expect(site.memory().entries).toBeLessThanOrEqual(CAP);
    }
    expect(site.memory().entries).toBe(CAP);
    expect(site.find('hot.txt')).toBe(hot);
  } finally {
    site.close();
  }
}, 60_000);

test('an entry forgotten for the cap and built again never sends what its file held before', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  // watch off: the check of the entry built again is all that can see the change
  const mw = serveStatic(dir, { watch: false });
  const srv = await listen(mw);
  /** @param {string} p */
  const get = (p) => new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: srv.port, path: p, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, length: res.headers['content-length'], body: Buffer.concat(chunks).toString() }));
    }).on('error', reject);
  });
  try {
    expect(await get('/x.txt')).toEqual({ status: 200, length: '6', body: 'x.txt\n' });
    expect(mw.memory()).toEqual({ entries: 1, bodies: 1, bodyBytes: 6, hashed: 0, manifestBytes: expect.any(Number), hot: expect.any(Number) });
    for (let i = 0; i < COLD.length; i += 64) {
      const got = await Promise.all(COLD.slice(i, i + 64).map((rel) => get(`/${rel}`)));
      expect(got.every((r, k) => r.status === 200 && r.body === `${COLD[i + k]}\n`)).toBe(true);
    }
    const m = mw.memory();
    expect(m.entries).toBe(CAP);
    expect(m.bodies).toBeLessThanOrEqual(m.entries); // no body of an entry forgotten is held
    // same size, other bytes, another mtime: what x.txt's first entry held must never be sent again
    await fs.writeFile(path.join(dir, 'x.txt'), 'X.TXT\n');
    for (let n = 0; n < 3; n++) expect(await get('/x.txt')).toEqual({ status: 200, length: '6', body: 'X.TXT\n' });
  } finally {
    agent.destroy();
    mw.close();
    await srv.close();
  }
}, 60_000);
