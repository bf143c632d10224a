import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';
import { listen, request, decode } from '../helpers/serve-site.js';
import { runCommand } from '../helpers/spawn.js';

// A file at a variant path that precompressor did not write is the user's (issue #12): never
// overwritten or removed, served as itself, and its would-be source gets no such variant.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const readManifest = async (root) => JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));
const exists = (p) => fs.access(p).then(() => true, () => false);
const opts = { concurrency: 2, deltas: false };

// The case: a 311-byte CSV beside the user's own 20,000-row gzip (another content).
const CSV = `id,name\n${Array.from({ length: 30 }, (_, i) => `${i},row ${i % 7}`).join('\n')}\n`;
const USER_GZ = zlib.gzipSync(Array.from({ length: 20_000 }, (_, i) => `${i},${(i * 7919) % 10007}`).join('\n'));
const SITEMAP = `<?xml version="1.0"?><urlset>${textOf(3000, 4)}</urlset>`;
const USER_SITEMAP_GZ = zlib.gzipSync(`<?xml version="1.0"?><urlset>${textOf(9000, 5)}</urlset>`);
const site = () => ({
  'index.html': `<!doctype html>${textOf(4000)}`,
  'downloads/data.csv': CSV,
  'downloads/data.csv.gz': USER_GZ,
  'sitemap.xml': SITEMAP,
  'sitemap.xml.gz': USER_SITEMAP_GZ,
});
const warningFor = (rel, stem, suffix) => ({
  path: rel,
  message: `not written by precompressor: kept as your own file and served as itself; ${stem} gets no ${suffix} variant. ` +
    `To resolve: rename or remove ${rel}, or exclude ${stem}`,
});

let root;
const cleanup = [];
beforeEach(async () => {
  root = await tempDir('pc-userfiles-');
});
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
  await fs.rm(root, { recursive: true, force: true });
});

test('precompress(): the user\'s X.gz is kept byte for byte, listed as itself, warned about once per run; X gets only .br', async () => {
  await writeTree(root, site());
  for (const run of [1, 2]) {
    const r = await precompress(root, opts);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([
      warningFor('downloads/data.csv.gz', 'downloads/data.csv', '.gz'),
      warningFor('sitemap.xml.gz', 'sitemap.xml', '.gz'),
    ]);
    expect(await fs.readFile(path.join(root, 'downloads/data.csv.gz'))).toEqual(USER_GZ);
    expect(await fs.readFile(path.join(root, 'sitemap.xml.gz'))).toEqual(USER_SITEMAP_GZ);
    const m = await readManifest(root);
    expect(m.files['downloads/data.csv.gz']).toMatchObject({ size: USER_GZ.length, variants: {}, skipped: 'compressed-format' });
    expect(Object.keys(m.files['downloads/data.csv'].variants)).toEqual(['br']);
    expect(Object.keys(m.files['sitemap.xml'].variants)).toEqual(['br']);
    expect(Object.keys(m.files['index.html'].variants)).toEqual(['br', 'gzip']);
    if (run === 2) expect(r.changes).toEqual([]); // nothing recompressed: the run is as fresh as any
  }
});

test('serveStatic answers /downloads/data.csv.gz with the user\'s bytes, and never serves it as the gzip of data.csv', async () => {
  await writeTree(root, site());
  await precompress(root, opts);
  const mw = serveStatic(root, { watch: false });
  const srv = await listen(mw);
  cleanup.push(async () => {
    mw.close();
    await srv.close();
  });
  for (const ae of ['gzip, br', 'gzip', 'identity']) {
    const r = await request(srv.port, '/downloads/data.csv.gz', { headers: { 'accept-encoding': ae } });
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body).toEqual(USER_GZ);
  }
  const gz = await request(srv.port, '/downloads/data.csv', { headers: { 'accept-encoding': 'gzip' } });
  expect(gz.headers['content-encoding']).toBeUndefined();
  expect(gz.body.toString()).toBe(CSV);
  const brotli = await request(srv.port, '/downloads/data.csv', { headers: { 'accept-encoding': 'gzip, br' } });
  expect(brotli.headers['content-encoding']).toBe('br');
  expect(decode(brotli).toString()).toBe(CSV);
});

test('our variant overwritten by the user later is theirs from then on; once they remove it, X gets its .gz again', async () => {
  await writeTree(root, { 'a.txt': textOf(5000) });
  await precompress(root, opts);
  const mine = Buffer.from('my own a.txt.gz, not a gzip at all');
  await fs.writeFile(path.join(root, 'a.txt.gz'), mine);
  const r = await precompress(root, opts);
  expect(r.warnings).toEqual([warningFor('a.txt.gz', 'a.txt', '.gz')]);
  expect(await fs.readFile(path.join(root, 'a.txt.gz'))).toEqual(mine);
  expect(Object.keys((await readManifest(root)).files['a.txt'].variants)).toEqual(['br']);

  await fs.rm(path.join(root, 'a.txt.gz'));
  const again = await precompress(root, opts);
  expect(again.warnings).toEqual([]);
  // (written again: from the variant cache, which still holds the .gz made before the user's)
  expect(again.changes).toEqual([{ path: 'a.txt', action: 'from cache' }]);
  expect(zlib.gunzipSync(await fs.readFile(path.join(root, 'a.txt.gz'))).toString()).toBe(textOf(5000));
});

test('a file of the same size written over our variant after the manifest is theirs too (the date tells)', async () => {
  await writeTree(root, { 'a.txt': textOf(5000) });
  await precompress(root, opts);
  const gz = path.join(root, 'a.txt.gz');
  const same = Buffer.alloc((await fs.stat(gz)).size, 0x61);
  await fs.writeFile(gz, same);
  const later = new Date(Date.now() + 60_000); // (explicit: file-system clocks are coarser than Date.now())
  await fs.utimes(gz, later, later);
  const r = await precompress(root, opts);
  expect(r.warnings).toEqual([warningFor('a.txt.gz', 'a.txt', '.gz')]);
  expect(await fs.readFile(gz)).toEqual(same);
});

test('orphans: when X is deleted, our X.gz is removed and the user\'s X.gz is kept', async () => {
  await writeTree(root, { 'ours.txt': textOf(5000, 1), 'theirs.txt': textOf(5000, 2), 'theirs.txt.gz': USER_GZ });
  await precompress(root, opts);
  await fs.rm(path.join(root, 'ours.txt'));
  await fs.rm(path.join(root, 'theirs.txt'));
  const r = await precompress(root, opts);
  // theirs.txt.br was ours: it goes with theirs.txt.
  expect(r.changes).toEqual(['ours.txt.br', 'ours.txt.gz', 'theirs.txt.br'].map((p) => ({ path: p, action: 'remove (orphan)' })));
  expect(await exists(path.join(root, 'ours.txt.gz'))).toBe(false);
  expect(await fs.readFile(path.join(root, 'theirs.txt.gz'))).toEqual(USER_GZ);
  expect((await readManifest(root)).files['theirs.txt.gz']).toMatchObject({ size: USER_GZ.length });
});

test('without a manifest: a file that decodes to exactly its source\'s bytes is adopted; one of another content is kept', async () => {
  await writeTree(root, {
    'a.txt': textOf(5000, 1),
    'a.txt.gz': zlib.gzipSync(textOf(5000, 1), { level: 1 }), // `gzip -1 -k a.txt`: same content
    'b.txt': textOf(5000, 2),
    'b.txt.br': zlib.brotliCompressSync(textOf(5001, 2)), // one byte more
    'c.txt': textOf(5000, 3),
    'c.txt.gz': zlib.gzipSync(textOf(5000, 3)), // c.txt is excluded: its .gz is not deleted as stale
  });
  const r = await precompress(root, { ...opts, exclude: ['c.txt'] });
  expect(r.warnings).toEqual([warningFor('b.txt.br', 'b.txt', '.br')]);
  const m = await readManifest(root);
  expect(Object.keys(m.files['a.txt'].variants)).toEqual(['br', 'gzip']);
  expect(m.files['a.txt.gz']).toBeUndefined();
  expect(Object.keys(m.files['b.txt'].variants)).toEqual(['gzip']);
  expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, 'b.txt.br'))).toString()).toBe(textOf(5001, 2));
  expect(await exists(path.join(root, 'c.txt.gz'))).toBe(true);
  expect(m.files['c.txt.gz']).toMatchObject({ skipped: 'compressed-format' });
});

test('a file of the user\'s named like a deploy delta is not removed as a stale delta', async () => {
  const rel = 'app.js.0123456789abcdef.dcz';
  await writeTree(root, { 'app.js': textOf(8000), [rel]: noiseOf(500) });
  const r = await precompress(root, { concurrency: 2 });
  expect(r.changes.filter((c) => c.action.startsWith('remove'))).toEqual([]);
  expect(await fs.readFile(path.join(root, rel))).toEqual(noiseOf(500));
  expect((await readManifest(root)).files[rel]).toMatchObject({ size: 500 });
});

test('CLI: the warning on stderr with the summary, and in --json report.warnings', async () => {
  await writeTree(root, site());
  const r = await runCommand(process.execPath, [BIN, root, '--no-deltas']);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(
    'warning: downloads/data.csv.gz: not written by precompressor: kept as your own file and served as itself; ' +
      'downloads/data.csv gets no .gz variant. To resolve: rename or remove downloads/data.csv.gz, or exclude downloads/data.csv\n',
  );
  expect(r.stderr.match(/warning: /g)).toHaveLength(2);
  expect(r.stdout).toMatch(/^precompressor: 5 files in /);
  const j = await runCommand(process.execPath, [BIN, root, '--json', '--no-deltas']);
  expect(JSON.parse(j.stdout).warnings.map((w) => w.path)).toEqual(['downloads/data.csv.gz', 'sitemap.xml.gz']);
  expect(await fs.readFile(path.join(root, 'downloads/data.csv.gz'))).toEqual(USER_GZ);
});

test('a delta-named file of the user\'s whose source is gone is not removed as a stale delta (even with deltas recorded for that source)', async () => {
  const rel = 'app.js.0123456789abcdef.dcz';
  await writeTree(root, { 'app.js': textOf(8000) });
  await precompress(root, opts);
  // The previous manifest gives app.js a delta (as a build with deltas would), then app.js goes.
  const m = await readManifest(root);
  const dict = Buffer.concat([Buffer.from('0123456789abcdef', 'hex'), Buffer.alloc(24)]).toString('base64'); // names `rel`
  m.files['app.js'].dictionary = { hash: dict, match: '/app.js', dest: 'script', hashed: false };
  m.files['app.js'].deltas = { [dict]: { dcz: { size: 40, hash: dict } } };
  await fs.writeFile(path.join(root, 'precompressor-manifest.json'), JSON.stringify(m));
  await fs.rm(path.join(root, 'app.js'));
  await fs.writeFile(path.join(root, rel), noiseOf(500));
  const r = await precompress(root, opts);
  expect(r.warnings).toEqual([]); // the edited manifest was read (not refused and started afresh)
  expect(r.changes.filter((c) => c.action.startsWith('remove')).map((c) => c.path)).toEqual(['app.js.br', 'app.js.gz']); // ours go
  expect(await fs.readFile(path.join(root, rel))).toEqual(noiseOf(500));
  expect((await readManifest(root)).files[rel]).toMatchObject({ size: 500 });
});

test('a source dated in the future: its variants are still ours, and go with it when it is deleted', async () => {
  await writeTree(root, { 'future.txt': textOf(5000, 9) });
  const later = new Date(Date.now() + 24 * 3600 * 1000);
  await fs.utimes(path.join(root, 'future.txt'), later, later);
  await precompress(root, opts);
  expect((await precompress(root, opts)).warnings).toEqual([]);
  await fs.rm(path.join(root, 'future.txt'));
  const r = await precompress(root, opts);
  expect(r.changes).toEqual(['future.txt.br', 'future.txt.gz'].map((p) => ({ path: p, action: 'remove (orphan)' })));
  expect(await exists(path.join(root, 'future.txt.gz'))).toBe(false);
});

describe('variants moved with their folder (#27, item 7)', () => {
  const OLD = textOf(6000, 21);
  const NEW = textOf(6500, 22);

  test('after mv sub sub2 and an edit of sub2/x.txt: the old variants are ours by the manifest that lists them under sub/, replaced', async () => {
    await writeTree(root, { 'index.html': textOf(3000), 'sub/x.txt': OLD });
    await precompress(root, opts);
    await fs.rename(path.join(root, 'sub'), path.join(root, 'sub2'));
    await fs.writeFile(path.join(root, 'sub2/x.txt'), NEW);
    const r = await precompress(root, opts);
    expect(r.warnings).toEqual([]);
    expect(r.changes).toContainEqual({ path: 'sub2/x.txt', action: 'compress' });
    expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, 'sub2/x.txt.br'))).toString()).toBe(NEW);
    expect(zlib.gunzipSync(await fs.readFile(path.join(root, 'sub2/x.txt.gz'))).toString()).toBe(NEW);
    const m = await readManifest(root);
    expect(Object.keys(m.files['sub2/x.txt'].variants).sort()).toEqual(['br', 'gzip']);
    expect(m.files['sub2/x.txt.br']).toBeUndefined();
  });

  test('the CLI, as the issue ran it: the file gets its variants again, no warning', async () => {
    await writeTree(root, { 'sub/x.txt': OLD });
    expect((await runCommand(process.execPath, [BIN, root, '--quiet', '--no-deltas'])).code).toBe(0);
    await fs.rename(path.join(root, 'sub'), path.join(root, 'sub2'));
    await fs.writeFile(path.join(root, 'sub2/x.txt'), NEW);
    const r = await runCommand(process.execPath, [BIN, root, '--json', '--no-deltas']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).warnings).toEqual([]);
    expect(zlib.gunzipSync(await fs.readFile(path.join(root, 'sub2/x.txt.gz'))).toString()).toBe(NEW);
  });

  test('without a record that says so, variants of one other content are kept, with a warning that they look like ours', async () => {
    await writeTree(root, { 'sub/x.txt': OLD });
    await precompress(root, opts);
    await fs.rename(path.join(root, 'sub'), path.join(root, 'sub2'));
    await fs.writeFile(path.join(root, 'sub2/x.txt'), NEW);
    await fs.rm(path.join(root, 'precompressor-manifest.json'));
    const gz = await fs.readFile(path.join(root, 'sub2/x.txt.gz'));
    const r = await precompress(root, { ...opts, cache: false });
    expect(r.warnings.map((w) => w.path).sort()).toEqual(['sub2/x.txt.br', 'sub2/x.txt.gz']);
    for (const w of r.warnings) {
      expect(w.message).toMatch(/^looks like a variant precompressor made of another content of sub2\/x\.txt \(sub2\/x\.txt\.br and sub2\/x\.txt\.gz decode to the same bytes; a folder moved or copied with its variants\?\), but no record says so: kept as your own file/);
    }
    expect(await fs.readFile(path.join(root, 'sub2/x.txt.gz'))).toEqual(gz);
  });
});
