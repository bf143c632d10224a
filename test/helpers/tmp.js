import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A fresh temp folder; remove it with the returned cleanup. */
export async function tempDir(prefix = 'precompressor-test-') {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Write a tree of files: { 'a/b.txt': 'content' | Buffer }. */
export async function writeTree(root, tree) {
  for (const [rel, content] of Object.entries(tree)) {
    const abs = path.join(root, rel);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, content);
  }
}

/** Compressible text of about `n` bytes, deterministic. */
export function textOf(n, seed = 1) {
  const words = ['static', 'asset', 'bundle', 'brotli', 'gzip', 'server', 'function', 'return', 'const', 'export'];
  let s = '';
  let x = seed;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += words[x % words.length] + (x % 7 === 0 ? '\n' : ' ');
  }
  return s.slice(0, n);
}

/** Incompressible bytes, deterministic. */
export function noiseOf(n, seed = 7) {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}
