import fs from 'node:fs/promises';
import path from 'node:path';
import { fork, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeSite, request, decode } from '../helpers/serve-site.js';

// A folder the server may not watch (fs.watch refused: EACCES here; the inotify limit, ENOSPC, takes
// the same path) is said once, and its files are checked on disk on every request: an edited page is
// never sent from memory with its old bytes. The refusal is real: the server runs as a user who may
// open the folder's files by name but not read the folder (mode 0311), which inotify needs.

const CHILD = fileURLToPath(new URL('../reliability/server-child.js', import.meta.url));

/**
 * Spawn options for a user a folder's mode can refuse: as root, `nobody`; as anyone else, ourselves.
 * null where chmod cannot refuse (no getuid: Windows) or there is no `nobody` to be.
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

const page = (/** @type {string} */ word) => `<!doctype html><title>${word}</title>${`<p>${word} page</p>`.repeat(60)}`;

/**
 * server-child.js on `dir` as `user`: its port, its stderr so far, and close().
 * @param {string} dir
 */
async function serveAs(dir) {
  const child = fork(CHILD, [dir, '{}'], { ...user, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    child.on('message', (m) => /** @type {any} */ (m)?.port && resolve(/** @type {any} */ (m).port));
    exited.then((code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
  const get = (/** @type {string} */ p, headers = {}) => request(port, p, { headers });
  const close = async () => {
    child.send('close');
    await exited;
    return stderr;
  };
  return { get, close };
}

(user ? test : test.skip)('folders the server may not watch: said once; their files are checked on every request, never sent stale from memory', async () => {
  const { dir } = await makeSite({ 'index.html': page('home'), 'locked/a.html': page('one'), 'shut/b.html': page('two') });
  try {
    await fs.chmod(dir, 0o755);
    for (const sub of ['locked', 'shut']) await fs.chmod(path.join(dir, sub), 0o311);
    const s = await serveAs(dir);
    let stderr = '';
    try {
      for (let i = 0; i < 2; i++) {
        for (const [p, word] of [['/locked/a.html', 'one'], ['/shut/b.html', 'two'], ['/index.html', 'home']]) {
          const res = await s.get(p, { 'accept-encoding': 'br' });
          expect(res.headers['content-encoding']).toBe('br');
          expect(decode(res).toString()).toBe(page(word));
        }
      }
      // edited in place, no event can come: the very next request sees it
      await fs.writeFile(path.join(dir, 'locked/a.html'), page('ONE'));
      for (const ae of ['br', 'gzip', 'identity']) {
        const res = await s.get('/locked/a.html', { 'accept-encoding': ae });
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding']).toBeUndefined();
        expect(res.body.toString()).toBe(page('ONE'));
      }
      await fs.writeFile(path.join(dir, 'locked/a.html'), page('one')); // back: its variants again
      expect((await s.get('/locked/a.html', { 'accept-encoding': 'br' })).headers['content-encoding']).toBe('br');
    } finally {
      stderr = await s.close();
    }
    const said = stderr.split('\n').filter((l) => l.includes('cannot watch'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^precompressor: cannot watch .*\/(locked|shut): permission denied \(EACCES\)/);
    expect(said[0]).toContain('checked on disk on every request, never sent from memory');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
