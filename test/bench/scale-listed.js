// A served folder whose manifest lists a million files, for serveStatic's start-up at that scale
// without writing a million files (its start-up reads only the manifest; a path is checked on disk
// on its first request):
//
//   node test/bench/scale-listed.js <dir> [--files 1000000] [--on-disk 1000]
//   node test/bench/scale-server.js precompressor <dir> '' . <dir>/probes.txt
//
// The first `--on-disk` icons exist with their .br variant; the rest are only listed. Writes the
// manifest with writeManifest() and the paths of the icons on disk to <dir>/probes.txt.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args, positionals } = parseArgs({ allowPositionals: true, options: { files: { type: 'string', default: '1000000' }, 'on-disk': { type: 'string', default: '1000' } } });
const [dir] = positionals;
if (!dir) throw new Error('usage: node test/bench/scale-listed.js <dir> [--files N] [--on-disk N]');
const { writeManifest, buildManifest, contentHash } = await import(pathToFileURL(path.join(repoRoot, 'lib/manifest/manifest.js')).href);
const n = Number(args.files);
const onDisk = Number(args['on-disk']);
/** @type {Map<string, object>} */
const files = new Map();
const probes = [];
for (let i = 0; i < n; i++) {
  const rel = `icons/${Math.floor(i / 1000)}/i${i}.svg`;
  const body = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><title>icon ${i}</title><path d="M${i % 24} ${i % 17}L3 4Z"/></svg>\n`.repeat(3));
  if (i < onDisk) {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, body);
    const br = zlib.brotliCompressSync(body);
    fs.writeFileSync(`${abs}.br`, br);
    files.set(rel, { size: body.length, mtimeMs: fs.statSync(abs).mtimeMs, hash: contentHash(body), variants: { br: { size: br.length } } });
    probes.push(`/${rel}`);
  } else {
    files.set(rel, { size: body.length, mtimeMs: 1795595115485.1174, hash: contentHash(body), variants: { br: { size: 120 } } });
  }
}
await writeManifest(path.join(dir, 'precompressor-manifest.json'), buildManifest({ tool: 'precompressor@bench', settings: { encodings: ['br'] }, files }));
fs.writeFileSync(path.join(dir, 'probes.txt'), probes.sort(() => Math.random() - 0.5).join('\n'));
