import fs from 'node:fs/promises';
import path from 'node:path';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

// The CLI's fixed cost (#31): --version answered before anything loads, V8's compile cache kept.
const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const PKG = JSON.parse(await fs.readFile(new URL('../../package.json', import.meta.url), 'utf8'));
const hasCompileCache = typeof module.enableCompileCache === 'function';

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** @param {string[]} args @param {Record<string, string>} env */
const run = (args, env = {}) => runCommand(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });

test('--version prints the package version alone, as yargs did', async () => {
  const r = await run(['--version']);
  expect(r).toMatchObject({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
});

(hasCompileCache ? test : test.skip)('a run fills the compile cache, by default in the temp folder', async () => {
  const cache = path.join(root, 'node-compile-cache');
  await writeTree(path.join(root, 'site'), { 'a.js': textOf(20_000) });
  const env = { ...process.env, TMPDIR: root };
  delete env.NODE_COMPILE_CACHE;
  const r = await runCommand(process.execPath, [BIN, path.join(root, 'site'), '--quiet', '--cache-dir', path.join(root, 'vc')],
    { env });
  expect(r).toMatchObject({ code: 0, stderr: '' });
  const files = await fs.readdir(cache, { recursive: true });
  expect(files.length).toBeGreaterThan(0);
});

test('a compile cache folder that cannot be written is no error', async () => {
  const blocker = path.join(root, 'file');
  await fs.writeFile(blocker, 'not a folder');
  await writeTree(path.join(root, 'site'), { 'a.js': textOf(20_000) });
  const env = { NODE_COMPILE_CACHE: path.join(blocker, 'cc') };
  const r = await run([path.join(root, 'site'), '--quiet', '--cache-dir', path.join(root, 'vc')], env);
  expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  await expect(fs.stat(path.join(root, 'site', 'a.js.br'))).resolves.toBeTruthy();
});
