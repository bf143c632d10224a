import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildManifest, writeManifest, readManifest } from '../lib/manifest.js';

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
