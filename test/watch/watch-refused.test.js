import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { watchFailureText } from '../../lib/errors.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// `precompressor <dir> --watch` on a folder it may not watch: a clear message and a non-zero exit,
// never "watching" and then nothing (exit 13, "unsettled top-level await", when no watch was set at
// all). The refusal is real: the CLI runs as a user who may not read the folder (mode 0311), which
// inotify needs. The inotify limit (ENOSPC) takes the same path; its message is checked alone.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
/** A fail-safe far above the normal time: a regression fails with what was seen, never hangs. */
const WAIT_MS = 30_000;

/**
 * Spawn options for a user a folder's mode can refuse: as root, `nobody`; as anyone else, ourselves.
 * @returns {{ uid?: number, gid?: number } | null}
 */
function deniableUser() {
  if (typeof process.getuid !== 'function') return null;
  if (process.getuid() !== 0) return {};
  try {
    return { uid: Number(execFileSync('id', ['-u', 'nobody'])), gid: Number(execFileSync('id', ['-g', 'nobody'])) };
  } catch {
    return null;
  }
}
const user = deniableUser();

const cleanup = /** @type {string[]} */ ([]);
afterAll(async () => {
  for (const dir of cleanup) {
    for (const d of [dir, path.join(dir, 'sub')]) await fs.chmod(d, 0o755).catch(() => {}); // listable again
    await fs.rm(dir, { recursive: true, force: true });
  }
});

/**
 * `precompressor <root> --watch` as `user`; `onOut(text so far)` at each stdout chunk. Resolves with
 * the exit and the output, or with `{ code: 'hung' }` after WAIT_MS (the child then killed).
 * @param {string} root
 * @param {(out: string) => void} [onOut]
 */
function watchAs(root, onOut = () => {}) {
  const child = spawn(process.execPath, [BIN, root, '--watch', '--no-cache', '--concurrency', '1'],
    { ...user, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => onOut(stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal === 'SIGKILL' ? 'hung' : code, stdout, stderr });
    });
  });
}

test('the message names the setting to raise (ENOSPC), or the permission (EACCES)', () => {
  const err = (/** @type {string} */ code) => Object.assign(new Error(`${code}: oops`), { code });
  expect(watchFailureText('/srv/site', err('ENOSPC'))).toBe('cannot watch /srv/site: the system limit on watched folders is ' +
    'reached (ENOSPC; every process of this user counts): raise fs.inotify.max_user_watches (e.g. sysctl fs.inotify.max_user_watches=524288)');
  expect(watchFailureText('/srv/site', err('EACCES'))).toBe('cannot watch /srv/site: permission denied (EACCES): let this user read it');
  expect(watchFailureText('/srv/site', err('EMFILE'))).toContain('fs.inotify.max_user_instances');
  expect(watchFailureText('/srv/site', err('EIO'))).toBe('cannot watch /srv/site: EIO: oops');
});

// (A root it may not read is refused before, by the walk; one it may read but not watch, as with
// ENOSPC, is refused here the same way.)
(user ? test : test.skip)('a folder it may not watch at start: exit 2 with the reason, nothing said to be watched', async () => {
  const root = await tempDir('pc-watch-refused-');
  cleanup.push(root);
  await writeTree(root, { 'a.txt': textOf(3000), 'sub/b.txt': textOf(3000, 2) });
  if (user?.uid !== undefined) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, root]);
  await fs.chmod(path.join(root, 'sub'), 0o311);
  const r = await watchAs(root);
  expect(r.code).toBe(2);
  expect(r.stdout).not.toContain('watching');
  // (the walk may say first that it cannot read it)
  expect(r.stderr.trim().split('\n').at(-1)).toBe(`precompressor: cannot watch ${root}/sub: permission denied (EACCES): let this user read it`);
});

(user ? test : test.skip)('a folder moved in later that it may not watch: the error, then exit 1', async () => {
  const root = await tempDir('pc-watch-refused-');
  const aside = await fs.mkdtemp(path.join(os.tmpdir(), 'pc-watch-aside-'));
  cleanup.push(root, aside);
  await writeTree(root, { 'a.txt': textOf(3000) });
  await writeTree(aside, { 'sub/b.txt': textOf(3000, 2) });
  await fs.chmod(path.join(aside, 'sub'), 0o311);
  if (user?.uid !== undefined) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, root]);
  const moved = new Promise((resolve) => {
    let done = false;
    const exited = watchAs(root, (out) => {
      if (done || !out.includes('watching')) return;
      done = true;
      fs.rename(path.join(aside, 'sub'), path.join(root, 'sub')); // appears at once, already unreadable
    });
    resolve(exited);
  });
  const r = /** @type {{ code: number | string, stdout: string, stderr: string }} */ (await moved);
  expect(r.stdout).toContain('watching');
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d error: cannot watch ${root}/sub: permission denied \\(EACCES\\)`, 'm'));
});
