import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { prepareDeltas } from '../../lib/compress/dictionaries/deploy-deltas.js';
import { storeFolderFor } from '../../lib/compress/dictionaries/dictionary-store.js';
import { normalizeOptions } from '../../lib/options.js';
import { readManifest } from '../../lib/manifest/manifest.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

// A dictionary store (the earlier versions the deploy deltas are made against) that someone else
// can write, like the variant cache beside it (cache-hostile.test.js): what such a writer cannot do.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const encoders = deltaEncoders();
const withEncoders = encoders.length > 0 ? test : test.skip;
if (encoders.length === 0) console.warn('dictionary store tests skipped: no delta encoder on this Node (zstd or Brotli with a dictionary)');
const hasMkfifo = (() => {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const withFifo = encoders.length > 0 && hasMkfifo ? test : test.skip;
if (!hasMkfifo) console.warn('FIFO tests skipped: no mkfifo here');

let work;
let out;
let store;
beforeEach(async () => {
  work = await tempDir('pc-store-hostile-');
  out = path.join(work, 'dist');
  store = path.join(work, 'store');
});
afterEach(() => fs.rm(work, { recursive: true, force: true }));

const bundle = (v) => `${textOf(20_000, 3)} version ${v} ${textOf(20_000, 4)}`;

/** A build of version `v` (the output emptied first, as bundlers do). */
async function write(v) {
  await fs.rm(out, { recursive: true, force: true });
  await writeTree(out, { 'app.js': bundle(v), 'index.html': textOf(500) });
}

/** The store folder of `out` (one per output folder) and its objects. */
function storeFolder() {
  const [id] = fsSync.readdirSync(store);
  return path.join(store, id);
}
const objectFiles = () => fsSync.readdirSync(path.join(storeFolder(), 'objects')).map((n) => path.join(storeFolder(), 'objects', n));

/** The CLI on `out` in a child process, killed after 60 s: a blocked open() cannot hang the test. */
async function cli() {
  const r = await runCommand(process.execPath, [BIN, out, '--json', '--dictionary-store', store], { timeout: 60_000 });
  expect([r.signal, r.code, r.stderr]).toEqual([null, 0, expect.any(String)]);
  return JSON.parse(r.stdout);
}

/** The files under `dir` with their content and mtime: what must not change there. */
function stateOf(dir) {
  return fsSync.readdirSync(dir, { recursive: true }).map(String).sort().map((rel) => {
    const st = fsSync.lstatSync(path.join(dir, rel));
    return [rel, st.mtimeMs, st.isFile() ? fsSync.readFileSync(path.join(dir, rel)).toString('base64') : null];
  });
}

const deltasOf = async () => Object.keys((await readManifest(path.join(out, 'precompressor-manifest.json')))?.files['app.js'].deltas ?? {});

describe('a dictionary store others can write (#27, item 4)', () => {
  withFifo('a FIFO planted as a stored version neither blocks the build nor is read: no delta against it', async () => {
    await write(1);
    await precompress(out, { dictionaryStore: store });
    const [object] = objectFiles();
    fsSync.rmSync(object);
    execFileSync('mkfifo', [object]);
    await write(2);
    const r = await cli();
    expect(r.deltas).toMatchObject({ written: 0 });
    expect(await deltasOf()).toEqual([]);
  });

  withFifo('a FIFO planted as index.json neither blocks the build nor is read: the store starts afresh, a regular index.json replaces it', async () => {
    await write(1);
    await precompress(out, { dictionaryStore: store });
    const index = path.join(storeFolder(), 'index.json');
    fsSync.rmSync(index);
    execFileSync('mkfifo', [index]);
    await write(2);
    const r = await cli();
    expect(r.deltas).toMatchObject({ written: 0 });
    expect(r.warnings).toEqual([]);
    expect(fsSync.lstatSync(index).isFile()).toBe(true);
  });

  withEncoders('a stored version that is a symlink (to a file with the right bytes) is not followed', async () => {
    await write(1);
    await precompress(out, { dictionaryStore: store });
    const [object] = objectFiles();
    const copy = path.join(work, 'copy');
    fsSync.renameSync(object, copy);
    fsSync.symlinkSync(copy, object);
    await write(2);
    const r = await precompress(out, { dictionaryStore: store });
    expect(r.deltas).toMatchObject({ written: 0 });
    expect(await deltasOf()).toEqual([]);
  });

  withEncoders('through an objects folder replaced by a symlink, versions are only read (and checked by their hash): nothing there is removed or written', async () => {
    await write(1);
    await precompress(out, { dictionaryStore: store });
    const objects = path.join(storeFolder(), 'objects');
    const elsewhere = path.join(work, 'elsewhere');
    fsSync.cpSync(objects, elsewhere, { recursive: true, preserveTimestamps: true });
    fsSync.writeFileSync(path.join(elsewhere, 'A'.repeat(43)), 'not listed: what the store removes from its own folder');
    fsSync.rmSync(objects, { recursive: true });
    fsSync.symlinkSync(elsewhere, objects);
    const before = stateOf(elsewhere);
    await write(2);
    const r = await precompress(out, { dictionaryStore: store });
    expect(r.deltas.written).toBe(encoders.length); // against version 1, read through the link and proven
    expect(r.warnings).toEqual([expect.objectContaining({ message: expect.stringMatching(/^dictionary store not updated \(.*objects is not a folder \(a symlink\?\)/) })]);
    expect(stateOf(elsewhere)).toEqual(before);
  });

  withEncoders("a store folder replaced by a symlink: nothing is written there (neither objects nor index.json)", async () => {
    await write(1);
    await precompress(out, { dictionaryStore: store });
    const folder = storeFolder();
    const elsewhere = path.join(work, 'elsewhere');
    fsSync.renameSync(folder, elsewhere);
    fsSync.symlinkSync(elsewhere, folder);
    const before = stateOf(elsewhere);
    await write(2);
    const r = await precompress(out, { dictionaryStore: store });
    expect(r.warnings).toEqual([expect.objectContaining({ message: expect.stringMatching(/^dictionary store not updated \(.* is not a folder \(a symlink\?\)/) })]);
    expect(stateOf(elsewhere)).toEqual(before);
  });
});

// The deltas' encoders and store made ready while a pass compresses (#31): prepareDeltas().
describe('prepareDeltas', () => {
  const optsOf = (extra = {}) => normalizeOptions(out, { dictionaryStore: store, ...extra });

  withEncoders('probes the encoders and makes the store folders, which the pass then records into', async () => {
    await write(1);
    const ready = await prepareDeltas(optsOf(), null);
    expect(ready?.encoders).toEqual(encoders);
    expect(fsSync.statSync(path.join(storeFolder(), 'objects')).isDirectory()).toBe(true);
    expect(fsSync.readdirSync(path.join(storeFolder(), 'objects'))).toEqual([]);
    await precompress(out, { dictionaryStore: store });
    expect(objectFiles()).toHaveLength(1); // app.js, the one file big enough for deltas
  });

  withEncoders('on a dry run, makes nothing', async () => {
    await write(1);
    const ready = await prepareDeltas(optsOf({ dryRun: true }), null);
    expect(ready?.store).not.toBeNull();
    expect(fsSync.existsSync(store)).toBe(false);
  });

  withEncoders('never rejects: a store folder that is a symlink gives null, and nothing is made through it', async () => {
    await write(1);
    const elsewhere = path.join(work, 'elsewhere');
    await fs.mkdir(elsewhere);
    await fs.mkdir(store);
    const folder = path.join(store, path.basename(storeFolderFor(store, path.resolve(out))));
    fsSync.symlinkSync(elsewhere, folder);
    await expect(prepareDeltas(optsOf(), null)).resolves.toBeNull();
    expect(fsSync.readdirSync(elsewhere)).toEqual([]);
  });

  test('no encoder asked (deltas off): no store opened, nothing made', async () => {
    await write(1);
    await expect(prepareDeltas(optsOf({ deltas: false }), null)).resolves.toEqual({ encoders: [], store: null });
    expect(fsSync.existsSync(store)).toBe(false);
  });
});
