// Fast regression guards for the bugs the reliability suite (test/reliability/, run with
// `npm run test:reliability`) found: each runs in a second or two.

import fs from 'node:fs/promises';
import path from 'node:path';
import http from 'node:http';
import { openSync, fstatSync, writeFileSync, renameSync } from 'node:fs';
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { streamFd } from '../../lib/serve/adapters/middleware.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/**
 * A user who can be refused a read, as spawn options: as root (which reads everything) the CLI runs
 * as `nobody` on a tree it owns; as anyone else it runs as ourselves. null where chmod cannot refuse
 * a read (Windows: no getuid) or there is no `nobody` to be.
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

(user ? test : test.skip)('an unreadable file is reported once (not once per encoding) and the run exits 1', async () => {
  await writeTree(root, { 'ok.js': textOf(5000), 'secret.js': textOf(5000, 2) });
  if (user?.uid !== undefined) execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, root]);
  await fs.chmod(path.join(root, 'secret.js'), 0o000);
  const child = spawn(process.execPath, [BIN, root, '--quiet'], { ...user, env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  expect(code).toBe(1);
  expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: secret\.js: EACCES: permission denied/)]);
  await fs.access(path.join(root, 'ok.js.br'));
  expect((await fs.readdir(root)).filter((n) => n.startsWith('secret.js.'))).toEqual([]);
});

test('names too long for a temp file beside them (227-252 bytes) are still compressed', async () => {
  const names = ['b'.repeat(224) + '.js', 'd'.repeat(249) + '.js'];
  await writeTree(root, Object.fromEntries(names.map((n) => [n, textOf(3000)])));
  const report = await precompress(root, { brotliQuality: 4 });
  expect(report.failures).toEqual([]);
  for (const n of names) {
    expect((await fs.stat(path.join(root, `${n}.br`))).isFile()).toBe(true);
    expect((await fs.stat(path.join(root, `${n}.gz`))).isFile()).toBe(true);
  }
  expect((await fs.readdir(root)).filter((n) => n.endsWith('.pctmp'))).toEqual([]);
});

test('a streamed file whose stat moved while it was read ends in a destroyed connection, not a complete body', async () => {
  const file = path.join(root, 'f.js');
  await fs.writeFile(file, textOf(300_000));
  const st = await fs.stat(file);
  let moved = false;
  const server = http.createServer((_req, res) => {
    const fd = openSync(file, 'r'); // streamFd owns and closes it
    const stat = moved ? Object.assign(Object.create(Object.getPrototypeOf(st)), st, { mtimeMs: st.mtimeMs - 1 }) : st;
    res.writeHead(200, { 'Content-Length': String(st.size) });
    streamFd(res, fd, 0, st.size - 1, st.size, stat);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  const fetchOnce = () => new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let n = 0;
      res.on('data', (c) => (n += c.length));
      res.on('end', () => resolve({ complete: res.complete, n }));
      res.on('error', () => resolve({ complete: false, n }));
    }).on('error', () => resolve({ complete: false, n: -1 }));
  });
  try {
    expect(await fetchOnce()).toEqual({ complete: true, n: st.size });
    moved = true;
    const r = /** @type {any} */ (await fetchOnce());
    expect(r.complete).toBe(false);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a streamed file replaced by rename meanwhile is still sent complete (the open descriptor keeps the old version)', async () => {
  const file = path.join(root, 'f.js');
  const old = textOf(300_000);
  await fs.writeFile(file, old);
  const server = http.createServer((_req, res) => {
    const fd = openSync(file, 'r'); // streamFd owns and closes it
    const st = fstatSync(fd);
    // An atomic deploy lands before the last chunk: it changes the old inode's ctime, not its bytes.
    writeFileSync(`${file}.tmp`, textOf(300_000, 9));
    renameSync(`${file}.tmp`, file);
    res.writeHead(200, { 'Content-Length': String(st.size) });
    streamFd(res, fd, 0, st.size - 1, st.size, st);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  try {
    const body = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(res.complete ? Buffer.concat(chunks).toString() : null));
        res.on('error', reject);
      }).on('error', reject);
    });
    expect(body).toBe(old);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
