import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { ManifestIndex, runIndex } from '../../lib/serve/manifest-index/manifest-index.js';
import { hashByte } from '../../lib/serve/manifest-index/key-table.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { manifestText } from '../../lib/manifest/manifest.js';
import { makeSite, listen, request } from '../helpers/serve-site.js';

// The server indexes a manifest's lines before validating them (lib/serve/manifest-index/line-scan.js): what a
// hostile line or a hostile set of file names can do to that index.

const ENTRY = { size: 1, mtimeMs: 1, hash: 'sha256-x', variants: {} };

/**
 * The index of a manifest in writeManifest()'s layout listing `rels`.
 * @param {string[]} rels
 */
function indexOf(rels) {
  const files = Object.fromEntries([...rels].sort().map((r) => [r, ENTRY]));
  const m = { schema: 3, tool: 't', settings: {}, generatedAt: '', files };
  return runIndex(ManifestIndex.of(Buffer.from([...manifestText(m)].join('')), 'm', null));
}

test('names made to collide under FNV-1a from its offset basis do not collide in the index', () => {
  // Two pairs of 7-byte blocks of one FNV-1a hash each from the offset basis, chained: four names
  // of one hash. 2^k such names from k pairs made the index probe past every other (quadratic start-up).
  const names = ['7yzlaaa0rjvaaa', '7yzlaaahpfxaaa', 'e6apaaa0rjvaaa', 'e6apaaahpfxaaa'].map((n) => `${n}.txt`);
  const index = indexOf(names);
  expect(new Set(index.lines.hashes.subarray(0, 4)).size).toBe(4);
  for (const n of names) expect(index.has(n)).toBe(true);
});

test('the hash leaves that family no collision from any of 20,000 random starts', () => {
  // FNV-1a alone (the step without the fold) kept all four names in one hash for 0.76 % of starts:
  // the test above failed now and then with the process's random start.
  const names = ['7yzlaaa0rjvaaa', '7yzlaaahpfxaaa', 'e6apaaa0rjvaaa', 'e6apaaahpfxaaa'].map((n) => Buffer.from(`${n}.txt`));
  let collided = 0;
  for (let i = 0; i < 20_000; i++) {
    const start = crypto.randomBytes(4).readInt32LE(0);
    const hashes = names.map((b) => b.reduce((h, c) => hashByte(h, c), start));
    if (new Set(hashes).size < 4) collided++;
  }
  expect(collided).toBe(0);
});

test('a line whose path is invalid adds no folder (none outside the root is watched)', () => {
  const index = indexOf(['ok/a.txt', '../outside/x.txt', '/abs/x.txt', 'a/../../up/x.txt', 'back\\slash/x.txt']);
  expect([...index.dirs].sort()).toEqual(['', 'ok']);
  // escaped in the JSON, parsed by the scan
  const escaped = indexOf(['\u0001ctl/x.txt', 'ok2/b.txt']);
  expect([...escaped.dirs].sort()).toEqual(['', 'ok2']);
});

test('a dictionary whose match or match-dest holds a byte no header may carry: that path is a 404 and said, not a 500', async () => {
  const body = 'let x = 1;\n'.repeat(100);
  const site = await makeSite({ 'a.js': body, 'b.js': body, 'ok.js': body });
  const m = JSON.parse(await fs.readFile(site.manifestPath, 'utf8'));
  const hash = crypto.createHash('sha256').update(body).digest('base64');
  m.files['a.js'].dictionary = { hash, match: '/a.js\r\nX-Evil: 1', dest: null, hashed: false };
  m.files['b.js'].dictionary = { hash, match: '/b.js', dest: 'script\u0000', hashed: false };
  m.files['ok.js'].dictionary = { hash, match: '/ok.js', dest: 'script', hashed: true }; // served immutable: kept
  await fs.writeFile(site.manifestPath, [...manifestText(m)].join(''));
  const warnings = [];
  const mw = serveStatic(site.dir, { watch: false, onWarning: (w) => warnings.push(w) });
  const srv = await listen((req, res) => mw(req, res, (err) => {
    res.statusCode = err ? 500 : 404;
    res.end();
  }));
  try {
    for (const p of ['/a.js', '/b.js']) {
      const r = await request(srv.port, p, { headers: { 'accept-encoding': 'br' } });
      expect([p, r.status, r.headers['x-evil']]).toEqual([p, 404, undefined]);
    }
    const ok = await request(srv.port, '/ok.js', { headers: { 'accept-encoding': 'br' } });
    expect([ok.status, ok.headers['use-as-dictionary']]).toEqual([200, 'match="/ok.js", match-dest=("script")']);
    expect(warnings.filter((w) => /entry "[ab]\.js" has an invalid dictionary; that path is not served/.test(w))).toHaveLength(2);
  } finally {
    await srv.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});

test('a listed file found missing on its first request is answered as on later requests (extensions, folder redirect)', async () => {
  const site = await makeSite({ about: 'plain', 'about.html': '<p>about</p>'.repeat(20), 'sub/in.txt': 'in' });
  // after the build: `about` deleted; and a manifest that also lists the folder `sub` as a file
  await fs.rm(path.join(site.dir, 'about'));
  const m = JSON.parse(await fs.readFile(site.manifestPath, 'utf8'));
  m.files.sub = m.files.about;
  await fs.writeFile(site.manifestPath, [...manifestText(m)].join(''));
  try {
    // with extensions, and without (the folder redirect must not need them)
    for (const extensions of [['html'], []]) {
      const mw = serveStatic(site.dir, { watch: false, onWarning: null, extensions });
      const srv = await listen((req, res) => mw(req, res, () => {
        res.statusCode = 404;
        res.end('next');
      }));
      const seen = [];
      for (const p of ['/about', '/about', '/sub', '/sub']) {
        const r = await request(srv.port, p);
        seen.push([p, r.status, r.headers.location ?? r.body.toString().slice(0, 12)]);
      }
      await srv.close();
      const about = extensions.length > 0 ? [200, '<p>about</p>'] : [404, 'next'];
      expect(seen).toEqual([['/about', ...about], ['/about', ...about], ['/sub', 301, '/sub/'], ['/sub', 301, '/sub/']]);
    }
  } finally {
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});
