// serveStatic's reading of its manifest: read whole and indexed (before #27), against read a piece
// at a time, kept only what serving reads (lib/serve/manifest-index/compact.js) and indexed, as start-up
// does, on a manifest of N entries written by writeManifest().
//
//   node test/bench/manifest-compact.js [--files 1000000] [--rounds 4]

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { manifestTextOf, readManifestBytesSync, readManifestPiecesSync } from '../../lib/manifest/manifest.js';
import { ManifestCompactor } from '../../lib/serve/manifest-index/compact.js';
import { ManifestIndex, runIndex } from '../../lib/serve/manifest-index/manifest-index.js';

const { values } = parseArgs({ options: { files: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '4' } } });
const n = Number(values.files);
const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-bench-compact-'));
const file = path.join(dir, 'precompressor-manifest.json');
/** The entries as their JSON text, made as they are written (no object of a million entries held). */
function* entries() {
  for (let i = 0; i < n; i++) {
    const e = { size: 1000 + i, mtimeMs: 1.7e12 + i, hash: `sha256-${'x'.repeat(43)}`, variants: { br: { size: 300 }, gzip: { size: 400 } } };
    yield /** @type {[string, string]} */ ([`assets/dir${i % 1000}/file-${i}.js`, JSON.stringify(e)]);
  }
}
const fd = fs.openSync(file, 'w');
for (const t of manifestTextOf({ schema: 3, tool: 'bench', settings: { encodings: ['br', 'gzip'] }, generatedAt: 'now' }, entries())) {
  fs.writeSync(fd, t);
}
fs.closeSync(fd);
console.log(`${n} entries, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB`);
for (let r = 0; r < Number(values.rounds); r++) {
  let t = performance.now();
  runIndex(ManifestIndex.of(/** @type {Buffer} */ (readManifestBytesSync(file)), file, null));
  const whole = performance.now() - t;
  t = performance.now();
  const got = /** @type {import('../../lib/serve/manifest-index/compact.js').Compact} */ (
    readManifestPiecesSync(file, { sink: (size) => new ManifestCompactor(file, size) }));
  runIndex(ManifestIndex.of(got.bytes, file, null, got.checkAll));
  console.log(`whole read + index ${whole.toFixed(0)} ms; kept + index ${(performance.now() - t).toFixed(0)} ms`);
}
await fsp.rm(dir, { recursive: true, force: true });
