import fs from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { keptAsDictionary } from '../../lib/site-policy.js';
import { getEach } from '../helpers/serve-site.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';

// What the headers promise is what a browser gets: a hashed name is immutable whatever its size or
// type; Use-As-Dictionary only on a response a browser keeps (fresh), so never on max-age=0.

let work;
let dir;
beforeAll(async () => {
  work = await tempDir();
  dir = path.join(work, 'dist');
  await writeTree(dir, {
    'assets/tiny-3f2a1b9c.js': 'export const a = 1;\n',
    'assets/logo.3f2a1b9c4d.png': noiseOf(300),
    'assets/index-B2xxxxx1.js': textOf(4_000),
    'app.js': textOf(4_000, 2),
    'docs/index.html': textOf(3_000, 3),
    '_next/static/xK2_buildid/_buildManifest.js': 'self.__BUILD_MANIFEST = {};\n', // Next.js: a build id in the path
    // words and numbers, and pages: names that stay when the content changes
    'chapter-10.html': textOf(3_000, 4),
    'notes/Page-1a2b3c4d5e6f7a8b.html': textOf(3_000, 5),
    'jquery-3-7-1.js': textOf(4_000, 6),
    'report-2024-11-28.js': textOf(4_000, 7),
  });
  await precompress(dir, { dictionaryStore: path.join(work, 'store'), siteDictionary: false });
});
afterAll(() => fs.rm(work, { recursive: true, force: true }));

/** GET each path through serveStatic(dir, options): [path, Cache-Control, Use-As-Dictionary]. */
async function headersOf(options, paths) {
  return getEach(serveStatic(dir, { watch: false, ...options }), paths, { 'accept-encoding': 'br, gzip' }, (p, r) => [p, r.status, r.headers['cache-control'], r.headers['use-as-dictionary']]);
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

test('by default: every hashed name immutable; Use-As-Dictionary only on those, not on max-age=0 files or pages', async () => {
  expect(await headersOf({}, ['/assets/tiny-3f2a1b9c.js', '/assets/logo.3f2a1b9c4d.png', '/assets/index-B2xxxxx1.js', '/app.js', '/docs/'])).toEqual([
    ['/assets/tiny-3f2a1b9c.js', 200, IMMUTABLE, undefined], // below deltaMinSize: no dictionary, still immutable
    ['/assets/logo.3f2a1b9c4d.png', 200, IMMUTABLE, undefined],
    ['/assets/index-B2xxxxx1.js', 200, IMMUTABLE, 'match="index-*.js", match-dest=("script")'],
    ['/app.js', 200, 'public, max-age=0', undefined],
    ['/docs/', 200, 'public, max-age=0', undefined],
  ]);
  expect(await headersOf({}, ['/_next/static/xK2_buildid/_buildManifest.js'])).toEqual([['/_next/static/xK2_buildid/_buildManifest.js', 200, IMMUTABLE, undefined]]);
});

test('a name of words and numbers, or a page whatever its name, is not a hash: never immutable (its next version would go unseen for a year)', async () => {
  const paths = ['/chapter-10.html', '/notes/Page-1a2b3c4d5e6f7a8b.html', '/jquery-3-7-1.js', '/report-2024-11-28.js'];
  expect(await headersOf({}, paths)).toEqual(paths.map((p) => [p, 200, 'public, max-age=0', undefined]));
});

test('a manifest written by the rule before, with such names hashed, is corrected by the next run', async () => {
  const site = path.join(work, 'upgraded');
  await writeTree(site, { 'chapter-10.html': textOf(3_000, 4), 'jquery-3-7-1.js': textOf(4_000, 6) });
  const opts = { dictionaryStore: path.join(work, 'store-upgraded'), siteDictionary: false };
  await precompress(site, opts);
  const file = path.join(site, 'precompressor-manifest.json');
  const m = JSON.parse(await fs.readFile(file, 'utf8'));
  for (const rel of ['chapter-10.html', 'jquery-3-7-1.js']) {
    m.files[rel].hashed = true; // what the rule before wrote for them
    if (m.files[rel].dictionary) m.files[rel].dictionary.hashed = true;
  }
  await fs.writeFile(file, JSON.stringify(m));
  const paths = ['/chapter-10.html', '/jquery-3-7-1.js'];
  const served = () => getEach(serveStatic(site, { watch: false }), paths, { 'accept-encoding': 'br' }, (p, r) => [p, r.headers['cache-control']]);
  expect(await served()).toEqual(paths.map((p) => [p, IMMUTABLE])); // as that manifest said
  await precompress(site, opts);
  const after = JSON.parse(await fs.readFile(file, 'utf8'));
  expect(['chapter-10.html', 'jquery-3-7-1.js'].map((rel) => [rel, after.files[rel].hashed, after.files[rel].dictionary?.hashed ?? false]))
    .toEqual([['chapter-10.html', undefined, false], ['jquery-3-7-1.js', undefined, false]]);
  expect(await served()).toEqual(paths.map((p) => [p, 'public, max-age=0']));
});

test('with a maxAge, unhashed files and folder-URL pages are kept, so they say so; dictionaries: false and immutableHashed: false as asked', async () => {
  expect(await headersOf({ maxAge: '1h' }, ['/app.js', '/docs/'])).toEqual([
    ['/app.js', 200, 'public, max-age=3600', 'match="app.js", match-dest=("script")'],
    ['/docs/', 200, 'public, max-age=3600', 'match="{index.html}?", match-dest=("document")'],
  ]);
  expect(await headersOf({ dictionaries: false }, ['/assets/tiny-3f2a1b9c.js', '/assets/index-B2xxxxx1.js'])).toEqual([
    ['/assets/tiny-3f2a1b9c.js', 200, IMMUTABLE, undefined],
    ['/assets/index-B2xxxxx1.js', 200, IMMUTABLE, undefined],
  ]);
  expect(await headersOf({ immutableHashed: false }, ['/assets/tiny-3f2a1b9c.js', '/assets/index-B2xxxxx1.js'])).toEqual([
    ['/assets/tiny-3f2a1b9c.js', 200, 'public, max-age=0', undefined],
    ['/assets/index-B2xxxxx1.js', 200, 'public, max-age=0', undefined],
  ]);
});

test.each([
  ['public, max-age=0', false],
  ['public, max-age=0, immutable', false],
  ['public, max-age=3600', true],
  [IMMUTABLE, true],
  ['no-store', false],
  ['private, max-age=60', true],
  [null, true],
])('kept as a dictionary with Cache-Control %j: %s', (cc, kept) => {
  expect(keptAsDictionary(cc)).toBe(kept);
});
