// What a write and a removal in the compressed tree cost through the folder held open
// (lib/held-folder.js, #27): writeAtomicSync() with checkParent and removeIfPresentSync(), here
// against the same functions of another checkout (--reference DIR, e.g. one before the held folder),
// in one process, the two interleaved round by round so that other load hits both alike.
//
//   npm run bench:held-folder -- --reference DIR [--files N] [--rounds N]
//
// Prints the median CPU time (user + system) per file of each, in µs.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { machineInfo, median } from './util.js';

const { values: args } = parseArgs({
  options: { reference: { type: 'string' }, files: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '8' } },
});
if (!args.reference) throw new Error('Expected --reference DIR: another checkout of precompressor to compare with');
const files = Number(args.files);
const rounds = Number(args.rounds);
const load = (root) => import(pathToFileURL(path.join(root, 'lib/fs-atomic.js')).href);
const sides = { reference: await load(path.resolve(args.reference)), this: await load(path.resolve(import.meta.dirname, '../..')) };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-held-'));
const dir = path.join(fs.realpathSync(tmp), 'site', 'assets', 'img'); // the tree's real path, three folders deep
fs.mkdirSync(dir, { recursive: true });
const data = Buffer.alloc(300, 1);

/** CPU µs per call of `fn(i)` for i < files. */
function cpuPerCall(fn) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < files; i++) fn(i);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / files;
}

const out = { reference: { write: [], remove: [] }, this: { write: [], remove: [] } };
for (let r = 0; r < rounds; r++) {
  for (const name of r % 2 ? ['this', 'reference'] : ['reference', 'this']) {
    const m = sides[name];
    out[name].write.push(cpuPerCall((i) => m.writeAtomicSync(path.join(dir, `f${i}.br`), data, { checkParent: true })));
    out[name].remove.push(cpuPerCall((i) => m.removeIfPresentSync(path.join(dir, `f${i}.br`))));
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(JSON.stringify(machineInfo()));
console.log(`${files} files × ${rounds} rounds, median CPU µs per file:`);
for (const [name, o] of Object.entries(out)) {
  console.log(`  ${name.padEnd(9)} write + rename ${median(o.write).toFixed(1)}, remove ${median(o.remove).toFixed(1)}`);
}
