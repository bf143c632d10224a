// The scale benchmarks' trees: SVG icons in folders of 1,000 (test/bench/scale.js, rebuild.js).

import fsp from 'node:fs/promises';
import path from 'node:path';

/** A small SVG icon, distinct for each `i` (paths of a few hundred bytes, as icon sets have). */
function icon(i) {
  let d = '';
  let x = i * 2654435761 >>> 0;
  for (let k = 0; k < 12; k++) {
    x = (x * 1103515245 + 12345) >>> 0;
    d += `${k ? 'L' : 'M'}${x % 24}.${(x >>> 8) % 10} ${(x >>> 12) % 24}.${(x >>> 16) % 10}`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><title>icon ${i}</title><path d="${d}Z"/><circle cx="${i % 24}" cy="${(i >>> 3) % 24}" r="${1 + (i % 5)}"/></svg>\n`;
}

/** Write `n` icons (`u` distinct) under `dir/icons/<k>/`, plus an index page; returns a sample of URL paths. */
export async function makeTree(dir, n, u) {
  const sample = [];
  for (let start = 0; start < n; start += 1000) {
    const folder = path.join(dir, 'icons', String(start / 1000));
    await fsp.mkdir(folder, { recursive: true });
    const writes = [];
    for (let i = start; i < Math.min(n, start + 1000); i++) writes.push(fsp.writeFile(path.join(folder, `i${i}.svg`), icon(i % u)));
    await Promise.all(writes);
  }
  await fsp.writeFile(path.join(dir, 'index.html'), `<!doctype html><title>scale</title><h1>${n} icons</h1>\n`.repeat(20));
  for (let k = 0; k < 2000; k++) {
    const i = Math.floor(Math.random() * n);
    sample.push(`/icons/${Math.floor(i / 1000)}/i${i}.svg`);
  }
  return sample;
}

/** Delete every variant, the manifest and its warm index under `dir` (what a clean CI checkout lacks). */
export async function removeOutputs(dir) {
  for (const d of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (d.isFile() && /\.(br|gz|zst)$|^precompressor-manifest\.json(\.pcindex)?$/.test(d.name)) await fsp.rm(path.join(d.parentPath, d.name));
  }
}

