import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders, dictionaryHashOf } from '../../lib/compress/dictionaries/delta-encode.js';
import { contentHash, readManifest } from '../../lib/manifest/manifest.js';
import { sketchOf, similarity, pairByContent, MIN_SIMILARITY } from '../../lib/compress/dictionaries/similarity.js';
import { tempDir, writeTree, textOf, noiseOf } from '../helpers/tmp.js';

const withEncoders = deltaEncoders().length > 0 ? test : test.skip;

/** Version `v` of chunk `i`: its own text, a few words changed per version. */
const chunk = (i, v = 0) => {
  const base = textOf(2_000 + ((i * 7_919) % 30_000), 100 + i);
  return v === 0 ? base : `${base.slice(0, base.length >> 1)} edit ${v}:${i} ${base.slice(base.length >> 1)}`;
};
const nameOf = (text) => `chunks/${crypto.createHash('sha256').update(text).digest('hex').slice(0, 16)}.js`;

test('the sketch tells a new version of a file from other files of the same kind', () => {
  const a = sketchOf(Buffer.from(chunk(1)));
  expect(similarity(a, a)).toBe(1);
  expect(similarity(a, sketchOf(Buffer.from(chunk(1, 2))))).toBeGreaterThan(0.8);
  for (let i = 2; i < 12; i++) expect(similarity(a, sketchOf(Buffer.from(chunk(i))))).toBeLessThan(MIN_SIMILARITY);
  expect(similarity(a, sketchOf(noiseOf(5_000)))).toBe(0);
  expect(similarity(sketchOf(Buffer.alloc(0)), sketchOf(Buffer.alloc(10)))).toBe(0);
});

test('pairs are one to one, most similar first, none under the floor', () => {
  const item = (name, text) => ({ item: name, size: text.length, sketch: sketchOf(Buffer.from(text)) });
  const fresh = [item('new1', chunk(1, 1)), item('new2', chunk(2, 1)), item('brand-new', chunk(50))];
  const earlier = [item('old2', chunk(2)), item('old1', chunk(1)), item('old1-older', chunk(1, 9)), item('old3', chunk(3))];
  const pairs = pairByContent(fresh, earlier).map((p) => [p.fresh, p.earlier]).sort();
  expect(pairs).toEqual([['new1', expect.stringMatching(/^old1/)], ['new2', 'old2']]);
});

describe('files named only by a hash, across two builds through the dictionary store', () => {
  let work;
  beforeEach(async () => {
    work = await tempDir();
  });
  afterEach(() => fs.rm(work, { recursive: true, force: true }));

  withEncoders('every changed chunk gets a delta against its own earlier version; a new chunk against none', async () => {
    const out = path.join(work, 'out');
    const opts = { dictionaryStore: path.join(work, 'store'), cache: false, concurrency: 2, encodings: ['gzip'] };
    const first = Object.fromEntries(Array.from({ length: 30 }, (_, i) => chunk(i)).map((t) => [nameOf(t), t]));
    await writeTree(out, first);
    await precompress(out, opts);
    // build 2: chunks 0-9 changed, 10-28 as they were, 29 gone, two new ones
    await fs.rm(out, { recursive: true });
    const second = {};
    const predecessor = new Map();
    for (let i = 0; i < 29; i++) {
      const text = i < 10 ? chunk(i, 1) : chunk(i);
      second[nameOf(text)] = text;
      if (i < 10) predecessor.set(nameOf(text), dictionaryHashOf(contentHash(Buffer.from(chunk(i)))));
    }
    for (const i of [60, 61]) second[nameOf(chunk(i))] = chunk(i);
    await writeTree(out, second);
    const r = await precompress(out, opts);
    const m = await readManifest(path.join(out, 'precompressor-manifest.json'));
    const withDeltas = Object.entries(m.files).filter(([, e]) => e.deltas).map(([rel, e]) => [rel, Object.keys(e.deltas)]);
    expect(Object.fromEntries(withDeltas)).toEqual(Object.fromEntries([...predecessor].map(([rel, h]) => [rel, [h]])));
    expect(m.files[nameOf(chunk(1, 1))].dictionary).toMatchObject({ match: '*.js', dest: 'script', hashed: true });
    expect(r.deltas).toMatchObject({ files: 0, byContent: 10 }); // counted apart: the folder shares one pattern
  });
});
