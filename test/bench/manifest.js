// How the manifest's size, parse time and write time grow with the number of files.
//
//   npm run bench:manifest -- [--files 10000,100000,1000000]
//
// Builds a manifest of N entries shaped like a real one (paths in folders of 1,000, a content
// hash, br and gzip variants), writes it with writeManifest() and reads it back with
// readManifest() (JSON.parse + validateManifest()) in a fresh process each, reporting the file's
// size, the time and the peak RSS of each.

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmt, fmtInt, markdownTable, timed } from './util.js';

const self = fileURLToPath(import.meta.url);
const repoRoot = path.resolve(path.dirname(self), '../..');
const manifestUrl = pathToFileURL(path.join(repoRoot, 'lib/manifest/manifest.js')).href;

/** In a child: write (`write <file> <n>`) or read (`read <file>`) and print the time in ms. */
async function child(mode, file, n) {
  const m = await import(manifestUrl);
  const t0 = performance.now();
  if (mode === 'read') {
    const read = await m.readManifest(file);
    if (Object.keys(read.files).length === 0) throw new Error('empty');
  } else {
    /** @type {Map<string, object>} */
    const files = new Map();
    for (let i = 0; i < n; i++) {
      const hash = 'sha256-' + crypto.createHash('sha256').update(String(i)).digest('base64url');
      files.set(`icons/${Math.floor(i / 1000)}/i${i}.svg`, { size: 360 + (i % 50), mtimeMs: 1795595115485.1174 + i, hash, variants: { br: { size: 216 }, gzip: { size: 254 } } });
    }
    const t1 = performance.now();
    await m.writeManifest(file, m.buildManifest({ tool: 'precompressor@0', settings: { encodings: ['br', 'gzip'] }, files }));
    process.stdout.write(String(performance.now() - t1));
    return;
  }
  process.stdout.write(String(performance.now() - t0));
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
  const { values } = parseArgs({ options: { files: { type: 'string', default: '10000,100000,1000000' } } });
  const sizes = values.files.split(',').map(Number);
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-manifest-'));
  const rows = [];
  try {
    for (const n of sizes) {
      const file = path.join(tmp, `m${n}.json`);
      const w = await timed(process.execPath, [self, '--child', 'write', file, String(n)]);
      const r = await timed(process.execPath, [self, '--child', 'read', file]);
      const bytes = (await fsp.stat(file)).size;
      rows.push([fmtInt(n), fmt(bytes / 2 ** 20, 1), fmt(bytes / n, 0), fmt(Number(w.stdout), 0), fmt(Number(r.stdout), 0), fmt(r.rssMB, 0)]);
      console.error(`${n}: ${bytes} bytes, write ${w.stdout} ms, read ${r.stdout} ms`);
    }
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
  console.log(`\n## Manifest size and read time, Node ${process.version}\n`);
  console.log(markdownTable(['files', 'MB', 'bytes per file', 'write ms', 'read + validate ms', 'reader peak RSS MB'], rows, 'rrrrrr'));
}
