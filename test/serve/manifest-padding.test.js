import fs from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { ManifestCompactor } from '../../lib/serve/manifest-index/compact.js';
import { manifestText } from '../../lib/manifest/manifest.js';
import { makeSite, listen, request, decode } from '../helpers/serve-site.js';

// serveStatic keeps of a manifest only what serving reads: white space and fields it does not read
// cost nothing, however large (#27: a padded manifest's reload grew the server tenfold). The
// figures of a 300 MB padded manifest are in test/reliability/manifest-padding.test.js.

const cleanup = /** @type {Array<() => Promise<void>>} */ ([]);
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

const text = (/** @type {number} */ n, /** @type {string} */ w) => `<p>${w}</p>`.repeat(n);

/**
 * `m` padded: white space between its tokens and at its end, an unknown field at the top and in
 * each entry, each `pad` bytes.
 * @param {any} m
 * @param {number} pad
 */
function padded(m, pad) {
  const files = Object.fromEntries(Object.entries(m.files).map(([rel, e]) => [rel, { ...(/** @type {object} */ (e)), note: 'n'.repeat(pad) }]));
  return JSON.stringify({ padding: 'p'.repeat(pad), ...m, files }, null, 1).replaceAll('\n', `\n${' '.repeat(64)}`) + ' '.repeat(pad);
}

test('a manifest padded with white space and unknown fields: only what serving reads is kept, and served as before', async () => {
  const site = await makeSite({ 'index.html': text(300, 'home'), 'app.js': text(400, 'app') });
  const mw = serveStatic(site.dir, { watch: false });
  const srv = await listen(mw);
  cleanup.push(async () => {
    mw.close();
    await srv.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  });
  const resting = mw.memory().manifestBytes;
  const manifest = path.join(site.dir, 'precompressor-manifest.json');
  const m = JSON.parse(await fs.readFile(manifest, 'utf8'));
  await fs.writeFile(manifest, padded(m, 4 << 20));
  expect((await fs.stat(manifest)).size).toBeGreaterThan(16 << 20);
  await mw.reload();
  expect(mw.memory().manifestBytes).toBeLessThanOrEqual(resting); // was the file's 16 MB
  for (const [p, w, n] of [['/index.html', 'home', 300], ['/app.js', 'app', 400]]) {
    const res = await request(srv.port, p, { headers: { 'accept-encoding': 'br' } });
    expect([p, res.headers['content-encoding'], decode(res).toString()]).toEqual([p, 'br', text(/** @type {number} */ (n), /** @type {string} */ (w))]);
  }
});

test('ManifestCompactor: any layout, cut anywhere, gives the same entries in writeManifest()\'s lines, unknown fields out', () => {
  const m = {
    schema: 3, tool: 't', settings: { encodings: ['br'], q: [1, { a: null }] }, generatedAt: 'now', extra: { a: [1, 'x\\"y'] },
    siteDictionary: { path: 'd.dict', hash: 'sha256-d', more: 1 },
    files: {
      'a.js': { size: 1, mtimeMs: 1.5e12, hash: 'sha256-x', type: 'text/javascript', variants: { br: { size: 3, junk: 'z' } },
        skipped: 'not-smaller', hashed: true, extra: [1, 2] },
      'd/\u00e9\\"q.js': { size: 2, mtimeMs: 0, hash: 'h', variants: {}, deltas: { k: { dcb: { size: 1, hash: 'y', j: 1 } } },
        dictionary: { hash: 'q', match: 'm', dest: null, hashed: true, z: 1 } },
      'd.dict': { size: 3, mtimeMs: 1, hash: 'sha256-d', variants: {} },
    },
  };
  const kept = {
    schema: 3, settings: m.settings, siteDictionary: { path: 'd.dict', hash: 'sha256-d' },
    files: {
      'a.js': { size: 1, mtimeMs: 1.5e12, hash: 'sha256-x', type: 'text/javascript', variants: { br: { size: 3 } },
        skipped: 'not-smaller', hashed: true },
      'd/\u00e9\\"q.js': { size: 2, mtimeMs: 0, hash: 'h', variants: {}, deltas: { k: { dcb: { size: 1, hash: 'y' } } },
        dictionary: { hash: 'q', match: 'm', dest: null, hashed: true } },
      'd.dict': m.files['d.dict'],
    },
  };
  const ours = [...manifestText({ ...m, extra: undefined, files: { ...kept.files } })].join('');
  for (const [layout, checkAll] of [[JSON.stringify(m), true], [JSON.stringify(m, null, 3), true], [padded(m, 1000), true], [ours, false]]) {
    const buf = Buffer.from(/** @type {string} */ (layout));
    for (const step of [1, 7, buf.length]) {
      const c = new ManifestCompactor('m.json', buf.length);
      for (let i = 0; i < buf.length; i += step) c.push(buf.subarray(i, i + step));
      const got = c.end();
      const lines = got.bytes.toString().split('\n');
      expect(got.checkAll).toBe(checkAll);
      expect(JSON.parse(got.bytes.toString())).toEqual(kept); // writeManifest()'s lines are copied whole, all fields kept
      expect(lines.slice(2, -3).map((l) => l.slice(0, 4))).toEqual(['  "a', '  "d', '  "d']); // one line per file
    }
  }
  for (const [bad, why] of [['', 'not valid JSON'], ['[1]', 'not a JSON object'], ['{"files": []}', '"files" is not an object'],
    ['{"a":1,}', 'not valid JSON'], ['{"a" 1}', 'not valid JSON'], ['{"files":{}} x', 'not valid JSON'], ['{"a":"\n"}', 'not valid JSON']]) {
    expect(() => {
      const c = new ManifestCompactor('m.json', 10);
      c.push(Buffer.from(bad));
      c.end();
    }).toThrow(`Invalid manifest m.json: ${why}`);
  }
});
