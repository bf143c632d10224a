import fs from 'node:fs/promises';
import path from 'node:path';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders, dictionaryHashOf } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';
import { deltaPath, readManifest, validateManifest } from '../../lib/manifest/manifest.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';

const encoders = deltaEncoders();
const withEncoders = encoders.length > 0 ? test : test.skip;
const withoutEncoders = encoders.length === 0 ? test : test.skip;

let work;
let out;
let store;
beforeEach(async () => {
  work = await tempDir();
  out = path.join(work, 'dist');
  store = path.join(work, 'store');
});
afterEach(() => fs.rm(work, { recursive: true, force: true }));

/** Version `v` of an app bundle: the same 40 kB of code with a small edit per version. */
function bundle(v) {
  const base = textOf(40_000, 3);
  return `${base.slice(0, 20_000)} version ${v} ${base.slice(20_000)}`;
}

/** A "build": Vite-style hashed names, emptied first like Vite does. */
async function build(v, extra = {}) {
  await fs.rm(out, { recursive: true, force: true });
  await writeTree(out, { [`assets/index-V${v}xxxxx1.js`]: bundle(v), 'app.js': bundle(v + 100), 'index.html': textOf(500), ...extra });
  return precompress(out, { dictionaryStore: store, concurrency: 1 });
}

const read = (rel) => fs.readFile(path.join(out, rel));

withEncoders('a second build gets deltas against the first: recorded, decoding to the new file, far below Brotli', async () => {
  await build(1);
  const old = bundle(1);
  const r = await build(2);
  expect(r.ok).toBe(true);
  const m = /** @type {import('../../lib/manifest/manifest.js').Manifest} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  expect(m.schema).toBe(3);
  const rel = 'assets/index-V2xxxxx1.js';
  const e = m.files[rel];
  expect(e.dictionary).toEqual({ hash: dictionaryHashOf(e.hash), match: 'index-*.js', dest: 'script', hashed: true });
  const dictKey = Object.keys(e.deltas ?? {})[0];
  expect(dictKey).toBe(dictionaryHashOf((await import('../../lib/manifest/manifest.js')).contentHash(Buffer.from(old))));
  expect(Object.keys(e.deltas ?? {})).toHaveLength(1);
  expect(Object.keys(/** @type {any} */ (e.deltas)[dictKey]).sort()).toEqual([...encoders].sort());
  for (const enc of encoders) {
    const body = await read(deltaPath(rel, dictKey, enc));
    expect(body.length).toBe(/** @type {any} */ (e.deltas)[dictKey][enc].size);
    expect(decodeDelta(enc, body, Buffer.from(old)).toString()).toBe(bundle(2));
    expect(body.length * 10).toBeLessThan(e.variants.br?.size ?? 0);
  }
  // the unhashed file is a family of one path, and gets its delta too
  expect(m.files['app.js'].dictionary).toMatchObject({ match: 'app.js', hashed: false });
  expect(Object.keys(m.files['app.js'].deltas ?? {})).toHaveLength(1);
  expect(m.files['index.html'].dictionary).toBeUndefined(); // below deltaMinSize
  expect(r.deltas).toMatchObject({ files: 1, unhashed: 1, byContent: 0, written: 2 * encoders.length, removed: 0 }); // app.js: no hash
  expect(r.deltas.savedBytes).toBeGreaterThan(0);
  expect(r.changes).toEqual(expect.arrayContaining([{ path: deltaPath(rel, dictKey, encoders[0]), action: `delta (${encoders[0]})` }]));
});

withEncoders('a warm run reuses the deltas; a delta file rewritten by someone else (another size) is theirs: kept, warned about, not made again', async () => {
  await build(1);
  await build(2);
  const again = await precompress(out, { dictionaryStore: store });
  expect(again.changes).toEqual([]);
  expect(again.deltas).toMatchObject({ written: 0, reused: 2 * encoders.length });
  const m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  const [dictKey] = Object.keys(m.files['app.js'].deltas);
  const file = path.join(out, deltaPath('app.js', dictKey, encoders[0]));
  await fs.appendFile(file, 'x');
  const theirs = await fs.readFile(file);
  const after = await precompress(out, { dictionaryStore: store });
  const rel = deltaPath('app.js', dictKey, encoders[0]);
  expect(after.warnings).toEqual([expect.objectContaining({ path: rel, message: expect.stringMatching(/^not written by precompressor: kept as your own file/) })]);
  expect(after.deltas.written).toBe(encoders.length - 1); // the same dictionary's other encoding, made again
  expect(await fs.readFile(file)).toEqual(theirs);
  const m2 = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  expect(m2.files['app.js'].deltas[dictKey]?.[encoders[0]]).toBeUndefined();
  expect(m2.files[rel]).toMatchObject({ size: theirs.length });
});

withEncoders('the store keeps dictionaryVersions earlier versions; deltas against versions that left it are removed', async () => {
  for (let v = 1; v <= 3; v++) await build(v);
  // (build() empties the folder, so check with app.js, rewritten in place, whose deltas stay on disk)
  let m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  expect(Object.keys(m.files['app.js'].deltas)).toHaveLength(2);
  await fs.writeFile(path.join(out, 'app.js'), bundle(104));
  const r = await precompress(out, { dictionaryStore: store, dictionaryVersions: 1 });
  m = await readManifest(path.join(out, 'precompressor-manifest.json'));
  expect(Object.keys(m.files['app.js'].deltas)).toHaveLength(1);
  // app.js: against versions 1 and 2 (its new dictionary is version 3); index-V3: against version 1
  expect(r.deltas.removed).toBe(3 * encoders.length);
  const left = (await fs.readdir(out)).filter((n) => /^app\.js\.[0-9a-f]{16}\.dc[bz]$/.test(n));
  expect(left).toHaveLength(encoders.length);
  const objects = await fs.readdir(path.join(store, (await fs.readdir(store))[0], 'objects'));
  expect(objects.length).toBeLessThanOrEqual(2 * 2); // two families, this version and one earlier each
});

withEncoders('previous: an older build folder is taken as the dictionaries, with an empty store', async () => {
  const prev = path.join(work, 'prev');
  await writeTree(prev, { 'assets/index-V1xxxxx1.js': bundle(1) });
  await writeTree(out, { 'assets/index-V2xxxxx1.js': bundle(2) });
  const r = await precompress(out, { dictionaryStore: store, previous: prev });
  expect(r.deltas.files).toBe(1);
  const m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  const e = m.files['assets/index-V2xxxxx1.js'];
  const [dictKey] = Object.keys(e.deltas);
  expect(decodeDelta(encoders[0], await read(deltaPath('assets/index-V2xxxxx1.js', dictKey, encoders[0])), Buffer.from(bundle(1))).toString()).toBe(bundle(2));
});

withEncoders('no delta is kept unless smaller than the best variant by deltaMargin', async () => {
  await writeTree(out, { 'assets/data-A1b2C3d4.json': noiseOf(20_000, 1) });
  await precompress(out, { dictionaryStore: store });
  await fs.rm(path.join(out, 'assets/data-A1b2C3d4.json'));
  await writeTree(out, { 'assets/data-B1b2C3d4.json': noiseOf(20_000, 2) });
  const r = await precompress(out, { dictionaryStore: store });
  const m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  expect(r.deltas).toMatchObject({ files: 0, written: 0 });
  expect(Object.values(m.files['assets/data-B1b2C3d4.json'].deltas ?? {}).every((d) => Object.keys(/** @type {object} */ (d)).length === 0)).toBe(true);
  expect((await fs.readdir(path.join(out, 'assets'))).filter((n) => n.endsWith('.dcz') || n.endsWith('.dcb'))).toEqual([]);
});

withEncoders('a dry run writes no delta and leaves the store as it was', async () => {
  await build(1);
  const storeBefore = await fs.readFile(path.join(store, (await fs.readdir(store))[0], 'index.json'), 'utf8');
  await fs.writeFile(path.join(out, 'app.js'), bundle(105));
  const r = await precompress(out, { dictionaryStore: store, dryRun: true });
  expect(r.changes).toEqual([{ path: 'app.js', action: 'compress' }]); // its deltas come with its variants
  expect((await fs.readdir(out)).filter((n) => /\.dc[bz]$/.test(n))).toEqual([]);
  expect(await fs.readFile(path.join(store, (await fs.readdir(store))[0], 'index.json'), 'utf8')).toBe(storeBefore);
});

test('deltas: false records no dictionary, writes no delta and leaves the store alone', async () => {
  await writeTree(out, { 'app.js': bundle(1) });
  const r = await precompress(out, { dictionaryStore: store, deltas: false });
  const m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  expect(m.files['app.js'].dictionary).toBeUndefined();
  expect(r.deltas).toMatchObject({ encoders: [], files: 0, unavailable: null });
  await expect(fs.access(store)).rejects.toThrow();
});

withoutEncoders('without an encoder that takes a dictionary: no deltas, said once in the report', async () => {
  await build(1);
  const r = await build(2);
  expect(r.deltas.encoders).toEqual([]);
  expect(r.deltas.unavailable).toMatch(/has no zstd or Brotli encoder that takes a dictionary/);
  expect((await fs.readdir(path.join(out, 'assets'))).filter((n) => /\.dc[bz]$/.test(n))).toEqual([]);
});

test('the manifest contract: version-1 manifests still read; bad dictionary or delta records are refused', () => {
  const v1 = { schema: 1, files: { 'a.js': { size: 1, mtimeMs: 1, hash: 'sha256-x', variants: {} } } };
  expect(validateManifest(v1).schema).toBe(1);
  const hash = Buffer.alloc(32, 1).toString('base64');
  const ok = { size: 1, mtimeMs: 1, hash: 'sha256-x', variants: {}, dictionary: { hash, match: 'a.js', dest: 'script', hashed: false }, deltas: { [hash]: { dcz: { size: 9, hash: 'sha256-y' } } } };
  expect(() => validateManifest({ schema: 2, files: { 'a.js': ok } })).not.toThrow();
  expect(() => validateManifest({ schema: 3, files: {} })).not.toThrow();
  expect(() => validateManifest({ schema: 4, files: {} })).toThrow(/schema 4/);
  expect(() => validateManifest({ schema: 2, files: { 'a.js': { ...ok, dictionary: { ...ok.dictionary, hash: 'nope' } } } })).toThrow(/invalid dictionary/);
  expect(() => validateManifest({ schema: 2, files: { 'a.js': { ...ok, deltas: { [hash]: { gzip: { size: 1, hash: 'h' } } } } } })).toThrow(/invalid "gzip" delta/);
  expect(() => validateManifest({ schema: 2, files: { 'a.js': { ...ok, dictionary: undefined } } })).toThrow(/deltas but no dictionary/);
});

test('every file with a hash in its name is recorded as hashed, whatever its size or type; an index page gets a pattern for its folder URL', async () => {
  await writeTree(out, {
    'assets/tiny-3f2a1b9c.js': 'export const a = 1;\n', // below deltaMinSize: no dictionary, still immutable
    'assets/logo.3f2a1b9c4d.png': noiseOf(300),
    'assets/5d6c5e71b5246344.js': textOf(2_000),
    'app.js': bundle(1),
    'docs/index.html': textOf(3_000),
  });
  await precompress(out, { dictionaryStore: store });
  const m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  const hashed = Object.entries(m.files).filter(([, e]) => /** @type {any} */ (e).hashed === true).map(([rel]) => rel).sort();
  expect(hashed).toEqual(['assets/5d6c5e71b5246344.js', 'assets/logo.3f2a1b9c4d.png', 'assets/tiny-3f2a1b9c.js']);
  expect(m.files['assets/tiny-3f2a1b9c.js'].dictionary).toBeUndefined();
  expect(m.files['docs/index.html'].dictionary).toMatchObject({ match: '{index.html}?', dest: 'document', hashed: false });
  expect(m.files['app.js'].dictionary).toMatchObject({ match: 'app.js', hashed: false });
  expect(() => validateManifest({ schema: 3, files: { 'a.js': { ...m.files['assets/tiny-3f2a1b9c.js'], hashed: false } } })).toThrow(/invalid hashed/);
});

// The store is written without fsync (a cache): what a power loss can leave must be read as nothing.
withEncoders('a store left cut short (its index, an object) makes no wrong delta and is rebuilt', async () => {
  await build(1);
  const [folder] = await fs.readdir(store);
  const index = path.join(store, folder, 'index.json');
  const text = await fs.readFile(index, 'utf8');
  await fs.writeFile(index, text.slice(0, Math.floor(text.length / 2)));
  let r = await build(2);
  expect(r.ok).toBe(true);
  expect(r.deltas.files).toBe(0); // nothing listed, nothing to make deltas against
  expect(JSON.parse(await fs.readFile(index, 'utf8')).schema).toBeDefined(); // written whole again
  const objects = path.join(store, folder, 'objects');
  for (const name of await fs.readdir(objects)) {
    const file = path.join(objects, name);
    const bytes = await fs.readFile(file);
    await fs.writeFile(file, bytes.subarray(0, bytes.length >> 1)); // every object cut short
  }
  r = await build(3);
  expect(r.ok).toBe(true);
  expect(r.deltas.files).toBe(0);
  const m = /** @type {any} */ (await readManifest(path.join(out, 'precompressor-manifest.json')));
  expect(Object.keys(m.files['assets/index-V3xxxxx1.js'].deltas ?? {})).toEqual([]);
  r = await build(4); // the store holds build 3 whole again: deltas as usual
  expect(r.deltas.files).toBeGreaterThan(0);
});
