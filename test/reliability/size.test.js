// A 2 GiB input through the real CLI: files at or above streamThreshold (64 MiB) are streamed, so
// the outputs must be correct and the CLI's peak RSS bounded whatever the input size.
//
// Brotli runs at quality 5 here: quality 11 measured about 0.2 MB/s on this generated text on
// one core, so a 2 GiB file would take hours. The streaming path is the same at every quality.

import { runCommand } from '../helpers/spawn.js';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { BIN, MANIFEST, MB, decodedHash, freeBytes, record } from './helpers.js';

const SIZE = 2 * 1024 * MB;
const RSS_LIMIT = 300 * MB;
const TIME = '/usr/bin/time';

/** 1 MiB of compressible JavaScript-like text, different for each seed. */
function block(seed) {
  const words = ['static', 'asset', 'bundle', 'brotli', 'gzip', 'server', 'function', 'return', 'const', 'export'];
  const parts = [];
  let n = 0;
  let x = seed;
  let i = 0;
  while (n < MB) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const s = `export const item_${seed}_${i++} = { id: ${x % 100000}, name: "${words[x % 10]}-${words[(x >> 4) % 10]}", ok: ${x % 3 === 0} };\n`;
    parts.push(s);
    n += s.length;
  }
  return Buffer.from(parts.join('')).subarray(0, MB);
}

/** Stream `size` bytes of 256 distinct blocks in a pseudo-random order to `file`; returns its sha256. */
async function generate(file, size) {
  const blocks = Array.from({ length: 256 }, (_, i) => block(i + 1));
  const hash = crypto.createHash('sha256');
  const out = fs.createWriteStream(file);
  let x = 42;
  for (let written = 0; written < size; written += MB) {
    x = (x * 1664525 + 1013904223) >>> 0;
    const b = blocks[x >>> 24];
    hash.update(b);
    if (!out.write(b)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve, reject) => out.end((/** @type {any} */ err) => (err ? reject(err) : resolve(undefined))));
  return hash.digest('hex');
}

let dir;
afterAll(async () => {
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

const enoughDisk = freeBytes(os.tmpdir()) > SIZE * 1.5;
const haveTime = fs.existsSync(TIME);
if (!enoughDisk) console.warn(`[reliability] size: SKIPPED, less than ${(SIZE * 1.5) / MB} MB free in ${os.tmpdir()}`);
if (!haveTime) console.warn(`[reliability] size: SKIPPED, ${TIME} is not installed (apt-get install time)`);

(enoughDisk && haveTime ? test : test.skip)('a 2 GiB file compresses to correct .br and .gz with bounded peak RSS', async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-size-'));
  const file = path.join(dir, 'huge.js');
  const t0 = Date.now();
  const expected = await generate(file, SIZE);
  const genSeconds = (Date.now() - t0) / 1000;

  const args = [BIN, dir, '--encodings', 'br,gzip', '--brotli-quality', '5', '--json'];
  const res = await runCommand(TIME, ['-f', 'TIME %M %e', process.execPath, ...args]);
  const m = /TIME (\d+) ([\d.]+)/.exec(res.stderr);
  expect(res.code).toBe(0);
  expect(m).not.toBeNull();
  const peakRss = Number(m?.[1]) * 1024;
  const seconds = Number(m?.[2]);

  const manifest = JSON.parse(await fsp.readFile(path.join(dir, MANIFEST), 'utf8'));
  const entry = manifest.files['huge.js'];
  expect(entry.size).toBe(SIZE);
  expect(entry.hash).toBe(`sha256-${Buffer.from(expected, 'hex').toString('base64url')}`);
  const sizes = {};
  for (const [enc, suffix] of [['br', '.br'], ['gzip', '.gz']]) {
    const st = await fsp.stat(file + suffix);
    expect(st.size).toBe(entry.variants[enc].size);
    sizes[enc] = st.size;
    expect(await decodedHash(file + suffix)).toBe(expected);
  }
  record('size', {
    inputBytes: SIZE, encodings: 'br (q5), gzip (9)', generateSeconds: genSeconds, compressSeconds: seconds,
    peakRssBytes: peakRss, peakRssMB: Math.round(peakRss / MB), brBytes: sizes.br, gzBytes: sizes.gzip,
  });
  expect(peakRss).toBeLessThan(RSS_LIMIT);
});
