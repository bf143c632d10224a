// A folder swapped for a symlink, again and again, while the CLI compresses the tree (#17, item 2):
// an upload folder that another user can write, compressed by a privileged job. A child process
// flips `uploads/` between the real folder and a symlink to a folder outside the tree as fast as it
// can during each run. Must hold: no byte of an outside file reaches the site (every variant in the
// tree decodes to its own source, the manifest lists nothing of the outside folder), and outside
// files are neither read into variants nor removed. What the remaining race (the instant between
// the check of a folder and the rename into it) allowed is counted and recorded.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { record, runCli } from './helpers.js';
import { procFdWorks } from '../../lib/held-folder.js';

const RUNS = 6;
const FILES = 150;
const OUTSIDE = 'OUTSIDE-FILE-CONTENT';

let base;
afterAll(async () => {
  if (base) await fsp.rm(base, { recursive: true, force: true });
});

/** Start flipping `uploads` between the folder and a symlink to `outside`; stop() ends it and puts the folder back. */
function startSwapper(root, outside) {
  const script = `
    const fs = require('fs');
    const [up, real, out] = process.argv.slice(1);
    let flips = 0;
    const hold = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
    for (;;) {
      // Each state held a moment (0-2 ms), so that the symlink is there for whole system calls.
      try { fs.renameSync(up, real); fs.symlinkSync(out, up); hold(Math.random() * 2); fs.unlinkSync(up); fs.renameSync(real, up); flips++; } catch {}
      hold(Math.random() * 2);
      if (flips % 50 === 0 && fs.existsSync(up + '.stop')) break;
    }
    fs.writeFileSync(up + '.flips', String(flips));`;
  const up = path.join(root, 'uploads');
  const stash = `${root}-stash`; // the real folder, while the symlink stands in for it: outside the tree
  const child = spawn(process.execPath, ['-e', script, up, stash, outside], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    async stop() {
      fs.writeFileSync(`${up}.stop`, '');
      await exited;
      const flips = Number(fs.readFileSync(`${up}.flips`, 'utf8'));
      for (const f of ['.stop', '.flips']) fs.rmSync(up + f, { force: true });
      if (fs.lstatSync(up, { throwIfNoEntry: false })?.isSymbolicLink()) fs.unlinkSync(up);
      if (!fs.existsSync(up) && fs.existsSync(stash)) fs.renameSync(stash, up);
      return flips;
    },
  };
}

/** name → content of every file in `dir` (not recursive). */
function contents(dir) {
  return new Map(fs.readdirSync(dir).map((n) => [n, fs.readFileSync(path.join(dir, n), 'latin1')]));
}

test(`a folder flipped to a symlink outside during ${RUNS} CLI runs of ${FILES} files: nothing outside reaches the site`, async () => {
  base = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-rel-swap-'));
  const totals = { runs: RUNS, files: FILES, flips: 0, failures: 0, variantsChecked: 0, outsideOverwritten: 0, outsideCreated: 0, outsideRemoved: 0 };
  for (let r = 0; r < RUNS; r++) {
    const root = path.join(base, `site-${r}`);
    const outside = path.join(base, `outside-${r}`);
    fs.mkdirSync(path.join(root, 'uploads'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(root, 'index.html'), 'x'.repeat(4000));
    for (let i = 0; i < FILES; i++) {
      fs.writeFileSync(path.join(root, 'uploads', `f${i}.txt`), `upload ${i} `.repeat(400));
      // Same names outside, and variants there as well: targets to overwrite or remove.
      for (const s of ['', '.br', '.gz']) fs.writeFileSync(path.join(outside, `f${i}.txt${s}`), `${OUTSIDE} ${i}${s}`);
    }
    if (r % 2 === 1) {
      // Every other run starts from a compressed tree whose sources are gone: its variants are to be removed.
      await runCli([root, '--quiet', '--no-cache']);
      for (let i = 0; i < FILES; i += 2) fs.rmSync(path.join(root, 'uploads', `f${i}.txt`));
    }
    const before = contents(outside);
    const swapper = startSwapper(root, outside);
    const run = await runCli([root, '--json', '--no-cache']);
    totals.flips += await swapper.stop();
    expect([0, 1]).toContain(run.code);
    totals.failures += JSON.parse(run.stdout).failures.length;

    const after = contents(outside);
    for (const [n, c] of before) {
      if (!after.has(n)) totals.outsideRemoved++;
      else if (after.get(n) !== c) totals.outsideOverwritten++;
    }
    for (const n of after.keys()) if (!before.has(n)) totals.outsideCreated++;
    // Whatever happened outside, the site holds only its own bytes: every variant in the tree
    // decodes to its source beside it, and no file of the tree holds outside content.
    for (const rel of fs.readdirSync(root, { recursive: true }).map(String)) {
      const abs = path.join(root, rel);
      if (!fs.lstatSync(abs).isFile()) continue;
      const bytes = fs.readFileSync(abs);
      const decode = rel.endsWith('.br') ? zlib.brotliDecompressSync : rel.endsWith('.gz') ? zlib.gunzipSync : null;
      const plain = decode ? decode(bytes) : bytes;
      expect(plain.includes(OUTSIDE)).toBe(false);
      if (decode && fs.existsSync(abs.slice(0, -3))) expect(plain).toEqual(fs.readFileSync(abs.slice(0, -3)));
      if (decode) totals.variantsChecked++;
    }
  }
  record('swap', totals);
  expect(totals.flips).toBeGreaterThan(RUNS * 10); // the attack ran during the runs
  // Sources are only read when they are the files the walk found: nothing outside is ever read.
  // On Linux every rename, unlink and temp file in the tree goes through its folder held open
  // (/proc/self/fd, lib/held-folder.js): nothing outside is written or removed (#27, item 9). Where
  // /proc is absent they are checked just before they happen (the folder's real path), and the
  // instant in between remains: 0 to 4 outside files per 6 runs here, against 231 removed and 20
  // overwritten by the code before that check.
  const touched = totals.outsideRemoved + totals.outsideOverwritten + totals.outsideCreated;
  expect(touched).toBeLessThanOrEqual(procFdWorks() ? 0 : 10);
});
