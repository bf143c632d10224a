import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildManifest, writeManifest, readManifest, readManifestSync, manifestText } from '../lib/manifest/manifest.js';

/** @param {Record<string, object>} files */
const manifestOf = (files) => buildManifest({ tool: 'precompressor@0.0.0', settings: { encodings: ['br', 'gzip'] }, files });

let dir;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pc-manifest-write-'));
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

test('the manifest is written in pieces, one line per file, and reads back as the same document', async () => {
  const files = {};
  // enough entries for several pieces of text, with names JSON must escape
  for (let i = 0; i < 12_000; i++) files[`d${i % 7}/f "${i}" é\u2028.js`] = { size: i, mtimeMs: 1.5 * i, hash: `sha256-${i}`, variants: { br: { size: 1 } } };
  files['empty.txt'] = { size: 0, mtimeMs: 0, hash: 'sha256-x', variants: {}, skipped: 'empty' };
  const m = manifestOf(files);
  const file = path.join(dir, 'm.json');
  await writeManifest(file, m);
  const text = await fs.readFile(file, 'utf8');
  expect(JSON.parse(text)).toEqual(m);
  expect(await readManifest(file)).toEqual(m);
  const lines = text.split('\n');
  expect(lines.filter((l) => l.startsWith('  "') && l.includes('"hash":"sha256-'))).toHaveLength(12_001);
  expect(lines.find((l) => l.startsWith('  "empty.txt"'))).toBe('  "empty.txt": {"size":0,"mtimeMs":0,"hash":"sha256-x","variants":{},"skipped":"empty"}');
  expect(text.endsWith('\n }\n}\n')).toBe(true);
});

test('a manifest without files is valid JSON too', async () => {
  const m = manifestOf({});
  const file = path.join(dir, 'sub/m.json');
  await writeManifest(file, m);
  expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual(m);
});

describe('reading, line by line or whole', () => {
  const files = { 'a.js': { size: 3, mtimeMs: 1, hash: 'sha256-a', variants: { br: { size: 2 } } }, 'b.js': { size: 4, mtimeMs: 2, hash: 'sha256-b', variants: {} } };
  const write = async (text) => {
    const file = path.join(dir, 'm.json');
    await fs.writeFile(file, text);
    return file;
  };
  const m = manifestOf(files);
  const ours = () => [...manifestText(m)].join('');

  test('any JSON layout reads as the same manifest, async and sync', async () => {
    for (const text of [ours(), JSON.stringify(m), JSON.stringify(m, null, 2), ours().replace('\n }\n}\n', '\n }\n}\n\n\n')]) {
      const file = await write(text);
      expect(await readManifest(file)).toEqual(m);
      expect(readManifestSync(file)).toEqual(m);
    }
  });

  test('a collector sees the head first, then each entry', async () => {
    const file = await write(ours());
    const seen = [];
    const collect = (head) => {
      seen.push(Object.keys(head.files).length);
      return { add: (rel) => seen.push(rel), done: () => seen };
    };
    expect(readManifestSync(file, { collect })).toEqual([0, 'a.js', 'b.js']);
  });

  test.each([
    ['a missing comma between entries', (t) => t.replace('}},\n', '}}\n'), /not valid JSON/],
    ['a comma after the last entry', (t) => t.replace('{}}\n }', '{}},\n }'), /not valid JSON/],
    ['a cut-off document', (t) => t.slice(0, -4), /not valid JSON/],
    ['an entry without a size', (t) => t.replace('"size":4,', ''), /entry "b.js" has no valid size/],
    ['an unknown encoding', (t) => t.replace('"br":', '"xz":'), /unknown encoding "xz"/],
  ])('%s is refused with the same error as a whole parse gives', async (_name, edit, message) => {
    const file = await write(edit(ours()));
    await expect(readManifest(file)).rejects.toThrow(message);
    expect(() => readManifestSync(file)).toThrow(message);
  });
});
