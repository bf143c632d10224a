import fs from 'node:fs/promises';
import path from 'node:path';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { siteDictionaryPath } from '../../lib/manifest/manifest.js';
import { tempDir } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';

// The previous manifest's `siteDictionary` names the file a run may remove when it chooses another
// dictionary: only the name precompressor writes for that hash is taken as one (#27, item 5).

const encoders = deltaEncoders();
const it = encoders.length > 0 ? test : test.skip;
if (encoders.length === 0) console.warn(`site-dictionary record tests skipped: Node ${process.version} has no zstd or Brotli dictionary encoder`);

let dir;
beforeEach(async () => {
  dir = await tempDir('pc-sd-record-');
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const MANIFEST = () => path.join(dir, 'precompressor-manifest.json');
const manifestOf = async () => JSON.parse(await fs.readFile(MANIFEST(), 'utf8'));

/** Rewrite the manifest's siteDictionary record (as whoever can write the folder could). */
async function forge(record) {
  const m = await manifestOf();
  await fs.writeFile(MANIFEST(), JSON.stringify({ ...m, siteDictionary: record }));
}

it('a manifest naming a page as the site dictionary: the page is kept, the run ends well, the real dictionary is recorded', async () => {
  const pages = await writeSite(dir, 8);
  await precompress(dir, { siteDictionary: true });
  const first = await manifestOf();
  expect(first.siteDictionary.path).toBe(siteDictionaryPath(first.siteDictionary.hash));
  const page = pages[3].rel;
  const bytes = await fs.readFile(path.join(dir, page));
  await forge({ path: page, hash: first.files[page].hash });
  const r = await precompress(dir, { siteDictionary: true });
  expect(r.ok).toBe(true);
  expect(await fs.readFile(path.join(dir, page))).toEqual(bytes);
  expect(r.changes.filter((c) => c.path === page)).toEqual([]);
  const after = await manifestOf();
  expect(after.siteDictionary).toEqual(first.siteDictionary);
  expect(after.files[page].hash).toBe(first.files[page].hash);
  expect(Object.keys(after.files[page].deltas ?? {})).toEqual(Object.keys(first.files[page].deltas ?? {}));
});

it('a dictionary name whose hex is not the recorded hash is not taken as ours either: nothing removed', async () => {
  await writeSite(dir, 8);
  await precompress(dir, { siteDictionary: true });
  const first = await manifestOf();
  // A file of the user's with a dictionary-like name, listed with its hash, named as the dictionary.
  const theirs = 'precompressor-dictionary.0123456789abcdef.dict';
  await fs.writeFile(path.join(dir, theirs), 'mine');
  await precompress(dir, { siteDictionary: true });
  const listed = await manifestOf();
  await forge({ path: theirs, hash: listed.files[theirs].hash });
  const r = await precompress(dir, { siteDictionary: true });
  expect(r.ok).toBe(true);
  expect(await fs.readFile(path.join(dir, theirs), 'utf8')).toBe('mine');
  expect((await manifestOf()).siteDictionary).toEqual(first.siteDictionary);
});
