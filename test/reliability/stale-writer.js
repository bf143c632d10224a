// The contents the staleness suite writes, shared by the writer process and the checks, and the
// writer itself: `node stale-writer.js <root> <seconds>` rewrites, grows, shrinks, deletes and
// recreates files under <root> until the time is up, then prints the last version numbers.

import fs from 'node:fs';
import path from 'node:path';

/** Version `v` of a rewritten file: its own token repeated, so that every byte says which version it is. */
export function versionOf(name, v) {
  const size = name === 'small.js' ? 2_000 + ((v * 131) % 20) * 1_000 : 100_000 + ((v * 7919) % 9) * 50_000;
  return Buffer.from(`${name}#${v};`.repeat(Math.ceil(size / (name.length + 4))).slice(0, size));
}

/** grow.js at any moment is a prefix of these chunks concatenated (chunk 0 is the first content). */
export function growChunk(k) {
  return Buffer.from(`grow#${k};`.repeat(2_000));
}

/** shrink.js at any moment is a prefix of this. */
export function shrinkOriginal() {
  return Buffer.from('shrink#0;'.repeat(200_000));
}

export const ATOMIC = ['small.js', 'atomic.js', 'gone.js'];
export const IN_PLACE = ['inplace.js'];

/** The first content of each file. */
export function initialFiles() {
  return {
    'small.js': versionOf('small.js', 0), 'atomic.js': versionOf('atomic.js', 0), 'gone.js': versionOf('gone.js', 0),
    'inplace.js': versionOf('inplace.js', 0), 'grow.js': growChunk(0), 'shrink.js': shrinkOriginal(),
  };
}

async function run(root, seconds) {
  const end = Date.now() + seconds * 1000;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const versions = { 'small.js': 0, 'atomic.js': 0, 'gone.js': 0, 'inplace.js': 0 };
  let grow = 0;
  let x = 7;
  const abs = (n) => path.join(root, n);
  const replace = (n, data) => {
    const tmp = path.join(root, `.${n}.writer-tmp`);
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, abs(n));
  };
  while (Date.now() < end) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const r = x >>> 12; // the low bits of this generator are poor
    switch (r % 6) {
      case 0: case 1: {
        const n = ATOMIC[(r >> 4) % 2];
        replace(n, versionOf(n, ++versions[n]));
        break;
      }
      case 2:
        fs.writeFileSync(abs('inplace.js'), versionOf('inplace.js', ++versions['inplace.js']));
        break;
      case 3:
        if (fs.statSync(abs('grow.js')).size > 2_000_000) fs.writeFileSync(abs('grow.js'), growChunk(0)), (grow = 0);
        else fs.appendFileSync(abs('grow.js'), growChunk(++grow));
        break;
      case 4: {
        const size = fs.statSync(abs('shrink.js')).size;
        if (size < 100_000) fs.writeFileSync(abs('shrink.js'), shrinkOriginal());
        else fs.truncateSync(abs('shrink.js'), size - 40_000 - (r % 1000));
        break;
      }
      default:
        if (fs.existsSync(abs('gone.js'))) fs.rmSync(abs('gone.js'));
        else replace('gone.js', versionOf('gone.js', ++versions['gone.js']));
    }
    await sleep(r % 15);
  }
  if (!fs.existsSync(abs('gone.js'))) replace('gone.js', versionOf('gone.js', ++versions['gone.js']));
  process.stdout.write(JSON.stringify({ versions, grow }) + '\n');
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  await run(process.argv[2], Number(process.argv[3]));
}
