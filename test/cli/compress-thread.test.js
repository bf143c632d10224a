import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../helpers/spawn.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { asksForCompression } from '../../lib/cli/compress-thread.js';

test('the pass thread is started ahead for a compression only', () => {
  expect(asksForCompression(['dist'])).toBe(true);
  expect(asksForCompression(['dist', '--json', '--watch'])).toBe(true);
  expect(asksForCompression(['--quiet', 'dist'])).toBe(true);
  expect(asksForCompression([])).toBe(true); // a usage error, which ends the thread
  expect(asksForCompression(['serve', 'dist'])).toBe(false);
  expect(asksForCompression(['cache', 'info'])).toBe(false);
  expect(asksForCompression(['--help'])).toBe(false);
  expect(asksForCompression(['dist', '-h'])).toBe(false);
  expect(asksForCompression(['--version'])).toBe(false);
});

test('a pass thread started ahead does not keep a command that does not compress running', async () => {
  // bin/precompressor.js starts the thread for these; each must still end, with its own exit code.
  const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
  const usage = await runCommand(process.execPath, [bin]);
  expect(usage.code).toBe(2);
  const unknown = await runCommand(process.execPath, [bin, 'dist', '--bogus-flag']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/bogus-flag/);
  const missing = await runCommand(process.execPath, [bin, path.join(os.tmpdir(), 'precompressor-no-such-dir')]);
  expect(missing.code).toBe(2);
});

test('the list of changes still reaches --dry-run\'s summary through the pass thread', async () => {
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
