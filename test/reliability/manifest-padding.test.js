// A served manifest swapped for a padded one (white space and unknown fields, 300 MB, under the
// 400 MiB cap) and reloaded: the server's peak RSS during the reload stays under twice its resting
// RSS plus what it keeps of the manifest (#27: 87 MB grew to 874 MB). Measured from /proc: the peak
// (VmHWM) is reset before the reload (clear_refs), so it is the reload's own. Prints its figures.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeSite } from '../helpers/serve-site.js';

const CHILD = fileURLToPath(new URL('./server-child.js', import.meta.url));
const MB = 1024 * 1024;
const PAD = 100 * MB; // each of: a top-level field, the entries' own fields, trailing white space
const canMeasure = fs.existsSync('/proc/self/clear_refs');

/** VmRSS and VmHWM (bytes) of process `pid`. @param {number} pid */
function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (/** @type {string} */ k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * Write `m` padded to `file`, in pieces: an unknown top-level string, an unknown field in each
 * entry, trailing white space; PAD bytes each.
 * @param {string} file
 * @param {any} m
 */
async function writePadded(file, m) {
  const out = fs.createWriteStream(file);
  const write = (/** @type {string | Buffer} */ s) => (out.write(s) ? Promise.resolve() : new Promise((r) => out.once('drain', r)));
  const run = async (/** @type {number} */ n, /** @type {string} */ ch) => {
    const piece = Buffer.alloc(MB, ch);
    for (let left = n; left > 0; left -= MB) await write(left >= MB ? piece : piece.subarray(0, left));
  };
  const { files, ...head } = m;
  await write('{"padding": "');
  await run(PAD, 'p');
  await write(`", ${JSON.stringify(head).slice(1, -1)}, "files": {\n`);
  const rels = Object.keys(files);
  for (const [i, rel] of rels.entries()) {
    await write(`  ${JSON.stringify(rel)}: ${JSON.stringify(files[rel]).slice(0, -1)}, "note": "`);
    await run(Math.floor(PAD / rels.length), 'n');
    await write(`"}${i < rels.length - 1 ? ',' : ''}\n`);
  }
  await write('}}');
  await run(PAD, ' ');
  await new Promise((resolve) => out.end(resolve));
}

(canMeasure ? test : test.skip)('reload of a 300 MB padded manifest peaks under 2 × resting RSS plus what is kept of it', async () => {
  const files = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`page-${i}.html`, `<p>page ${i}</p>`.repeat(50)]));
  const site = await makeSite(files);
  const child = fork(CHILD, [site.dir, JSON.stringify({ watch: false })], { execArgv: ['--expose-gc'] });
  const ask = (/** @type {string} */ msg, /** @type {(m: any) => boolean} */ is) => new Promise((resolve) => {
    const on = (/** @type {any} */ m) => is(m) && (child.off('message', on), resolve(m));
    child.on('message', on);
    child.send(msg);
  });
  try {
    await new Promise((resolve) => child.once('message', resolve)); // { port }
    const resting = (await ask('stats', (m) => m?.rss !== undefined)).rss;
    const manifest = path.join(site.dir, 'precompressor-manifest.json');
    const next = `${manifest}.next`;
    await writePadded(next, site.manifest);
    const size = (await fsp.stat(next)).size;
    await fsp.rename(next, manifest);
    fs.writeFileSync(`/proc/${child.pid}/clear_refs`, '5'); // the peak from now on
    const done = await ask('reload', (m) => m?.reloaded);
    const { peak } = rssOf(/** @type {number} */ (child.pid));
    const kept = done.memory?.manifestBytes ?? 0;
    const limit = 2 * resting + kept;
    console.log(`padded manifest ${(size / MB).toFixed(0)} MB: resting RSS ${(resting / MB).toFixed(1)} MB, ` +
      `reload peak ${(peak / MB).toFixed(1)} MB (limit ${(limit / MB).toFixed(1)} MB), kept ${kept} bytes, error ${done.error}`);
    expect(done.error).toBeNull();
    expect(peak).toBeLessThan(limit);
  } finally {
    child.kill();
    await fsp.rm(site.dir, { recursive: true, force: true });
  }
});
