// Deploy-delta benchmark (`npm run bench:deltas`): two real "builds" made of the published bundles
// of adjacent library versions (three, vue, react-dom, preact), each file under a Vite-style
// hashed name. The first build fills the dictionary store; the second is compressed with deltas.
// Reports per changed bundle what a returning visitor downloads (br-11 against the delta the server
// sends), and the CPU time of the deltas (encode dcb + dcz and decode-verify, one thread) against
// the Brotli 11 time of the same files (the library's own options, one thread).
//
//   node test/bench/deltas.js [--json]
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { npmInstallCached } from './corpus.js';
import { markdownTable, fmtInt, fmt, machineInfo } from './util.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders, encodeDelta, verifyDelta } from '../../lib/compress/dictionaries/delta-encode.js';
import { encodeBufferSync, zlibOptions } from '../../lib/compress/encoders/encode.js';

/** [package, old version, new version, files in the package]. */
const PAIRS = [
  ['three', '0.169.0', '0.170.0', ['build/three.module.js', 'build/three.module.min.js', 'build/three.webgpu.js', 'build/three.webgpu.min.js']],
  ['vue', '3.5.12', '3.5.13', ['dist/vue.global.prod.js', 'dist/vue.esm-browser.prod.js', 'dist/vue.runtime.esm-browser.prod.js']],
  ['react-dom', '18.2.0', '18.3.1', ['umd/react-dom.production.min.js', 'umd/react-dom.development.js']],
  ['preact', '10.24.3', '10.25.0', ['dist/preact.min.js', 'dist/preact.module.js']],
];

/** Vite-style name: `<name>-<8 base64url characters of the content hash>.js`. */
function hashedName(file, bytes) {
  const base = path.posix.basename(file).replace(/\.(m?js|cjs)$/, '').replace(/\./g, '_');
  return `assets/${base}-${crypto.createHash('sha256').update(bytes).digest('base64url').slice(0, 8).replace(/^[-_]/, 'x')}.js`;
}

/** Install both versions of every pair (cached) and return [{ pkg, file, old, next }] with the bytes. */
async function loadPairs() {
  const out = [];
  for (const [pkg, a, b, files] of PAIRS) {
    const oldDir = await npmInstallCached(`deltas-${pkg}-${a}`, [`${pkg}@${a}`]);
    const newDir = await npmInstallCached(`deltas-${pkg}-${b}`, [`${pkg}@${b}`]);
    for (const file of files) {
      const old = await fs.readFile(path.join(oldDir, pkg, file));
      const next = await fs.readFile(path.join(newDir, pkg, file));
      out.push({ pkg: `${pkg} ${a} → ${b}`, file: `${pkg}/${file}`, old, next });
    }
  }
  return out;
}

/** Write a build: every file under its hashed name, the folder emptied first (as Vite does). */
async function writeBuild(dir, pairs, which) {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(dir, 'assets'), { recursive: true });
  const names = [];
  for (const p of pairs) {
    const name = hashedName(p.file, p[which]);
    await fs.writeFile(path.join(dir, name), p[which]);
    names.push(name);
  }
  return names;
}

/** CPU time (ms, this thread) of `fn`, best of `runs`. */
async function timeMs(fn, runs) {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

async function main() {
  const json = process.argv.includes('--json');
  const encoders = deltaEncoders();
  if (encoders.length === 0) {
    console.error(`Node ${process.version} cannot make deltas (no zstd or Brotli encoder that takes a dictionary): run this on Node >= 22.19.`);
    process.exit(2);
  }
  const pairs = await loadPairs();
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pc-bench-deltas-'));
  try {
    // No variant cache: both passes below encode everything (what a cold build costs).
    const dist = path.join(work, 'dist');
    const store = path.join(work, 'store');
    await writeBuild(dist, pairs, 'old');
    await precompress(dist, { dictionaryStore: store, cache: false });
    const names = await writeBuild(dist, pairs, 'next');
    const started = performance.now();
    const report = await precompress(dist, { dictionaryStore: store, cache: false });
    const passMs = performance.now() - started;
    const manifest = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
    // The same second build compressed without deltas: the wall-clock cost of deltas in a whole pass.
    const plain = path.join(work, 'plain');
    await writeBuild(plain, pairs, 'next');
    const plainStarted = performance.now();
    await precompress(plain, { deltas: false, cache: false });
    const plainMs = performance.now() - plainStarted;

    const rows = [];
    const totals = { raw: 0, br: 0, sent: 0, brMs: 0, deltaMs: 0 };
    for (const [i, p] of pairs.entries()) {
      const e = manifest.files[names[i]];
      const deltas = Object.values(e.deltas ?? {})[0] ?? {};
      const best = Object.entries(deltas).sort((x, y) => x[1].size - y[1].size)[0];
      const br = e.variants.br.size;
      const sent = best ? best[1].size : br;
      // CPU time on one thread: Brotli 11 with the library's options; dcb + dcz + their verification
      const brOpts = zlibOptions('br', { size: p.next.length, mode: 'text', brotliQuality: 11, gzipLevel: 9 });
      const brMs = await timeMs(() => encodeBufferSync(p.next, 'br', brOpts), 1);
      const digest = crypto.createHash('sha256').update(p.old).digest();
      const deltaMs = await timeMs(async () => {
        for (const enc of encoders) {
          const d = await encodeDelta(enc, p.next, p.old, digest);
          if (d && !verifyDelta(enc, d, p.old, digest, p.next)) throw new Error(`${enc} of ${p.file} did not verify`);
        }
      }, 1);
      totals.raw += p.next.length;
      totals.br += br;
      totals.sent += sent;
      totals.brMs += brMs;
      totals.deltaMs += deltaMs;
      rows.push([p.file, p.pkg.replace(/^\S+ /, ''), fmtInt(p.next.length), fmtInt(br), fmtInt(deltas.dcb?.size), fmtInt(deltas.dcz?.size),
        `${fmt((sent / br) * 100, 1)} %`, fmtInt(brMs), fmtInt(deltaMs), fmt(deltaMs / brMs)]);
    }
    rows.push(['**all changed bundles**', '', fmtInt(totals.raw), fmtInt(totals.br), '', '', `**${fmt((totals.sent / totals.br) * 100, 1)} %**`,
      fmtInt(totals.brMs), fmtInt(totals.deltaMs), `**${fmt(totals.deltaMs / totals.brMs)}**`]);
    const result = { node: process.version, machine: machineInfo(), encoders, totals, passMs, plainMs, deltas: report.deltas, rows };
    if (json) {
      console.log(JSON.stringify(result, null, 2));
      return;
    }
    console.log(`Node ${process.version}, encoders ${encoders.join(' + ')}; ${JSON.stringify(machineInfo())}`);
    console.log(markdownTable(['bundle', 'versions', 'raw B', 'br-11 B', 'dcb B', 'dcz B', 'sent / br-11', 'br-11 ms', 'deltas ms', 'deltas / br-11 time'], rows, 'llrrrrrrrr'));
    console.log(`\nReturning visitor after the deploy: ${fmtInt(totals.br)} B with br-11, ${fmtInt(totals.sent)} B with deltas ` +
      `(${fmt((totals.sent / totals.br) * 100, 1)} %). Whole pass over the second build (all cores, br-11 + gzip-9 + deltas): ` +
      `${fmtInt(passMs)} ms, against ${fmtInt(plainMs)} ms with --no-deltas (× ${fmt(passMs / plainMs)}); ` +
      `report: ${report.deltas.files} files, ${report.deltas.written} deltas written, ${fmtInt(report.deltas.savedBytes)} B saved.`);
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

await main();
