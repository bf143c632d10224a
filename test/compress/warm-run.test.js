import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { identityOf, writeIndex } from '../../lib/compress/pass/warm-index.js';
import { normalizeOptions } from '../../lib/options.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// The warm index (lib/compress/pass/warm-index.js) and the warm run (warm-run.js, #31): a re-run on an
// unchanged folder answers from the index and the stat data; any change is seen, and the whole pass
// makes it, as it did without an index.

const MANIFEST = 'precompressor-manifest.json';
const INDEX = `${MANIFEST}.pcindex`;
// two pages: a site dictionary where Node has the encoders, itself a file of the manifest
const dict = deltaEncoders().length > 0 ? 1 : 0;
let root;
let opts;
beforeEach(async () => {
  root = await tempDir('pc-warm-');
  opts = { cacheDir: path.join(root, '..', `${path.basename(root)}-cache`) };
  await writeTree(root, {
    'index.html': `<!doctype html><title>a</title>${textOf(3000, 1)}`,
    'about.html': `<!doctype html><title>b</title>${textOf(3000, 2)}`,
    'assets/app.3f2a91bc.js': textOf(20_000, 3),
    'assets/style.css': textOf(5000, 4),
    'img/a.svg': textOf(800, 5),
    'img/photo.png': 'not really a png',
    'empty.txt': '',
  });
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(opts.cacheDir, { recursive: true, force: true });
});

const read = (rel) => fs.readFile(path.join(root, rel), 'utf8');
const noDuration = ({ durationMs: _d, ...r }) => r;

test('the index is written beside the manifest, never listed; a warm run reports as the whole pass and writes nothing', async () => {
  await precompress(root, opts);
  const manifest = await read(MANIFEST);
  expect(JSON.parse(manifest).files[INDEX]).toBeUndefined();
  const index = await fs.stat(path.join(root, INDEX));
  const warm = await precompress(root, opts);
  expect(warm.files).toMatchObject({ scanned: 7 + dict, unchanged: 5 + dict, compressedFormat: 1, empty: 1, compressed: 0 });
  expect(warm.changes).toEqual([]);
  expect(await read(MANIFEST)).toBe(manifest);
  expect((await fs.stat(path.join(root, INDEX))).mtimeMs).toBe(index.mtimeMs);
  // the whole pass, without the index, says the same (and writes it again)
  await fs.rm(path.join(root, INDEX));
  expect(noDuration(await precompress(root, opts))).toEqual(noDuration(warm));
  expect(await read(MANIFEST)).toBe(manifest);
  await fs.access(path.join(root, INDEX));
});

test('each change after the index is seen: a file changed, added or removed, a variant gone, a temp left', async () => {
  await precompress(root, opts);
  await writeTree(root, { 'assets/style.css': textOf(5100, 6), 'img/new.svg': textOf(900, 7) });
  let r = await precompress(root, opts);
  expect(r.changes.map((c) => c.path).sort()).toEqual(['assets/style.css', 'img/new.svg']);
  const br = await fs.readFile(path.join(root, 'assets/style.css.br'));
  expect(zlib.brotliDecompressSync(br).toString()).toBe(textOf(5100, 6));

  await fs.rm(path.join(root, 'img/a.svg.gz'));
  r = await precompress(root, opts);
  expect(r.files).toMatchObject({ unchanged: 5 + dict, fromCache: 1 });
  await fs.access(path.join(root, 'img/a.svg.gz'));

  await fs.rm(path.join(root, 'img/new.svg'));
  r = await precompress(root, opts);
  expect(r.changes).toEqual([{ path: 'img/new.svg.br', action: 'remove (orphan)' }, { path: 'img/new.svg.gz', action: 'remove (orphan)' }]);
  expect(JSON.parse(await read(MANIFEST)).files['img/new.svg']).toBeUndefined();

  // a temp of a run that is gone (pid 1 is never ours... use a pid that cannot exist)
  await writeTree(root, { 'img/.a.svg.999999999-abcdef.pctmp': 'left by a killed run' });
  r = await precompress(root, opts);
  expect(r.changes).toEqual([{ path: 'img/.a.svg.999999999-abcdef.pctmp', action: 'remove (temp)' }]);
  expect(noDuration(await precompress(root, opts)).files).toMatchObject({ unchanged: 5 + dict, compressed: 0, fromCache: 0 });
});

test('the index holds for one manifest file and one set of options', async () => {
  await precompress(root, opts);
  // a manifest written again by someone else (same text, another file): the whole pass, not the index
  const text = await read(MANIFEST);
  await fs.rm(path.join(root, MANIFEST));
  await fs.writeFile(path.join(root, MANIFEST), text);
  const before = (await fs.stat(path.join(root, INDEX))).mtimeMs;
  expect((await precompress(root, opts)).files).toMatchObject({ unchanged: 5 + dict });
  expect((await fs.stat(path.join(root, INDEX))).mtimeMs).toBeGreaterThan(before);
  // other options: what they decide, not what the index says
  const r = await precompress(root, { ...opts, exclude: ['**/*.svg'] });
  expect(r.files).toMatchObject({ excluded: 1, unchanged: 4 + dict });
  expect(r.changes).toEqual([{ path: 'img/a.svg.br', action: 'remove (stale)' }, { path: 'img/a.svg.gz', action: 'remove (stale)' }]);
});

test('an index cut short or garbled is not trusted, and the whole pass writes it again', async () => {
  await precompress(root, opts);
  const file = path.join(root, INDEX);
  const whole = await fs.readFile(file, 'utf8');
  expect(whole.endsWith('\nend\n')).toBe(true);
  // cut after its last folder line, as a crash before the data reached the disk may leave it
  await fs.writeFile(file, whole.slice(0, -'end\n'.length));
  expect((await precompress(root, opts)).files).toMatchObject({ unchanged: 5 + dict });
  expect(await fs.readFile(file, 'utf8')).toBe(whole);
  // a folder's line that does not parse: the run still answers, and the index is made again
  const lines = whole.split('\n');
  const at = lines.findIndex((l) => l.startsWith('"img"\t'));
  lines[at] = `"img"\t[[`;
  await fs.writeFile(file, lines.join('\n'));
  expect((await precompress(root, opts)).files).toMatchObject({ unchanged: 5 + dict });
  expect((await fs.readFile(file, 'utf8')).split('\n')[at]).toMatch(/^"img"\t\[\["a\.svg"/);
});

test('the index holds no option as it is: a remote cache\'s credentials never reach the folder', async () => {
  await precompress(root, opts);
  const manifest = JSON.parse(await read(MANIFEST));
  const secret = 'tok-3f9a7c1e';
  process.env.PRECOMPRESSOR_CACHE_TOKEN = secret;
  try {
    const withRemote = normalizeOptions(root, { ...opts, cacheUrl: 'http://user:pw-5b2d@127.0.0.1:1/' });
    expect(JSON.stringify(withRemote.cacheHeaders)).toContain(secret);
    await fs.rm(path.join(root, INDEX));
    expect(await writeIndex(withRemote, manifest, identityOf(path.join(root, MANIFEST)))).toBe(true);
  } finally {
    delete process.env.PRECOMPRESSOR_CACHE_TOKEN;
  }
  const text = await read(INDEX);
  expect(text).not.toContain(secret);
  expect(text).not.toContain('pw-5b2d');
  // and it is the index a run without the remote uses
  expect((await precompress(root, opts)).files).toMatchObject({ unchanged: 5 + dict });
  expect(await read(INDEX)).toBe(text);
});
