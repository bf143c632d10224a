import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../helpers/spawn.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import zlib from 'node:zlib';
import { fewEntries } from '../../lib/cli/compress-thread.js';

test('a tree of fewer entries than the limit is small; counting stops at the limit', async () => {
  const root = await tempDir();
  try {
    await writeTree(root, { 'a.js': 'a', 'sub/b.js': 'b', 'sub/deeper/c.js': 'c' });
    expect(fewEntries(root, 6)).toBe(true); // 5 entries: a.js, sub, b.js, deeper, c.js
    expect(fewEntries(root, 5)).toBe(false);
    expect(fewEntries(path.join(root, 'missing'), 1)).toBe(true); // the pass reports it
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('a large tree\'s pass runs on the pass thread and reports as a small one does', async () => {
  const root = await tempDir();
  try {
    await writeTree(root, { 'a.js': textOf(20_000) });
    for (let i = 0; i < 5000; i++) await fs.mkdir(path.join(root, `d${i}`));
    expect(fewEntries(root)).toBe(false);
    const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
    const r = await runCommand(process.execPath, [bin, root, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).files).toMatchObject({ compressed: 1 });
    expect(zlib.brotliDecompressSync(await fs.readFile(path.join(root, 'a.js.br'))).toString()).toBe(textOf(20_000));
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('a command that does not compress ends with its own exit code', async () => {
  const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
  const usage = await runCommand(process.execPath, [bin]);
  expect(usage.code).toBe(2);
  const unknown = await runCommand(process.execPath, [bin, 'dist', '--bogus-flag']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/bogus-flag/);
  const missing = await runCommand(process.execPath, [bin, path.join(os.tmpdir(), 'precompressor-no-such-dir')]);
  expect(missing.code).toBe(2);
});

test('the list of changes still reaches --dry-run\'s summary', async () => {
  const root = await tempDir();
  try {
    await writeTree(root, { 'a.js': textOf(20_000), 'sub/c.css': textOf(3000, 2) });
    const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
    const r = await runCommand(process.execPath, [bin, root, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/would compress 2,/);
    expect(r.stdout).toContain('  compress: a.js\n');
    expect(r.stdout).toContain('  compress: sub/c.css\n');
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
