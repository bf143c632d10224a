import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { realOf, realOfName, servableReal } from '../../lib/serve/bodies/open.js';
import { makeSite, listen, request } from '../helpers/serve-site.js';

/**
 * A file system changed under a running server by someone who can write the served folder
 * (issue 17, items 10, 11, 12, 14 and 15): a folder swapped for a symlink out of the root, a
 * FIFO, symlink aliases of dotfiles and of the manifest, an oversized manifest on reload, a root
 * path too long for the OS. Deterministic: each change is made, then the request sent; the racing
 * versions are in test/reliability/hostile-fs.test.js.
 */

const SECRET = 'OUTSIDE-SECRET-';
const posix = process.platform === 'win32' ? test.skip : test;
const BIG = 'let inside = 1;\n'.repeat(8000); // 128 KB: above memoryFileLimit, streamed from disk

/** @type {string[]} */
const cleanup = [];
afterAll(async () => {
  for (const p of cleanup) await fsp.rm(p, { recursive: true, force: true });
});

async function site(files, opts) {
  const s = await makeSite(files, opts);
  cleanup.push(s.dir, `${s.dir}-outside`);
  return s;
}

/** Give `to` the mtime of `from` to the nanosecond (fs.utimes rounds it). */
function copyMtime(from, to) {
  const ns = fs.statSync(from, { bigint: true }).mtimeNs;
  execFileSync('touch', ['-m', '-d', `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`, to]);
}

/** Make `file` outside the root look like `like` to a size and mtime check: same size, same mtime. */
async function lookalike(file, like, fill) {
  const st = await fsp.stat(like);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, fill.repeat(Math.ceil(st.size / fill.length)).slice(0, st.size));
  copyMtime(like, file);
  expect((await fsp.stat(file)).mtimeMs).toBe(st.mtimeMs);
}

/** Replace the folder `dir` by a symlink to `target` (the old folder moved aside). */
async function swapForLink(dir, target) {
  await fsp.rename(dir, `${dir}.old`);
  await fsp.symlink(target, dir);
}

function mkfifo(p) {
  execFileSync('mkfifo', [p]);
  // a reader stuck in open() would hold one of libuv's threads for ever: let it go at the end
  cleanup.unshift(p);
  return p;
}
function unblock(p) {
  for (let i = 0; i < 8; i++) {
    try {
      fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      return;
    }
  }
}

describe('a folder swapped for a symlink out of the root after startup (item 10)', () => {
  posix('manifest mode: neither the variant nor the original is read through the link', async () => {
    const s = await site({ 'sub/big.js': BIG, 'index.html': '<p>home</p>' });
    const outside = `${s.dir}-outside`;
    const sub = path.join(s.dir, 'sub');
    await lookalike(path.join(outside, 'big.js'), path.join(sub, 'big.js'), SECRET);
    await lookalike(path.join(outside, 'big.js.br'), path.join(sub, 'big.js.br'), SECRET);
    const mw = serveStatic(s.dir, { watch: false, memoryFileLimit: 0 }); // every representation streamed
    const srv = await listen(mw);
    try {
      expect((await request(srv.port, '/sub/big.js')).body.toString()).toBe(BIG);
      await swapForLink(sub, outside);
      for (const ae of ['br', 'identity', 'br', 'identity']) {
        const res = await request(srv.port, '/sub/big.js', { headers: { 'accept-encoding': ae } });
        expect(res.body.includes(SECRET)).toBe(false);
        expect(res.status).toBe(404);
      }
    } finally {
      mw.close();
      await srv.close();
    }
  });

  posix('a stale entry (served from disk by its path) is not read through the link either', async () => {
    const s = await site({ 'sub/big.js': BIG });
    const outside = `${s.dir}-outside`;
    const sub = path.join(s.dir, 'sub');
    const mw = serveStatic(s.dir, { watch: false });
    const srv = await listen(mw);
    try {
      // the original changed: the entry turns stale and is served from the file as it is
      await fsp.appendFile(path.join(sub, 'big.js'), '// changed\n');
      expect((await request(srv.port, '/sub/big.js')).body.toString()).toBe(`${BIG}// changed\n`);
      await lookalike(path.join(outside, 'big.js'), path.join(sub, 'big.js'), SECRET);
      await swapForLink(sub, outside);
      const res = await request(srv.port, '/sub/big.js');
      expect(res.body.includes(SECRET)).toBe(false);
      expect(res.status).toBe(404);
    } finally {
      mw.close();
      await srv.close();
    }
  });

  posix('a file replaced by another file inside the root (a new deploy) is still served', async () => {
    const s = await site({ 'sub/big.js': BIG });
    const file = path.join(s.dir, 'sub', 'big.js');
    const mw = serveStatic(s.dir, { watch: false });
    const srv = await listen(mw);
    try {
      await fsp.writeFile(`${file}.new`, BIG);
      copyMtime(file, `${file}.new`);
      await fsp.rename(`${file}.new`, file); // same bytes and mtime, another inode
      const res = await request(srv.port, '/sub/big.js', { headers: { 'accept-encoding': 'identity' } });
      expect(res.status).toBe(200);
      expect(res.body.toString()).toBe(BIG);
      await mw.settled();
      const br = await request(srv.port, '/sub/big.js', { headers: { 'accept-encoding': 'br' } });
      expect(zlib.brotliDecompressSync(br.body).toString()).toBe(BIG);
    } finally {
      mw.close();
      await srv.close();
    }
  });
});

describe('the descriptor checks themselves', () => {
  const realOfP = (fd, file, st) => new Promise((resolve) => realOf(fd, file, st, resolve));
  const byName = (file, st) => new Promise((resolve) => realOfName(file, st, resolve));

  posix('the real path of a descriptor is where it was opened, also after its folder became a link out', async () => {
    const s = await site({ 'sub/big.js': BIG });
    const outside = `${s.dir}-outside`;
    const sub = path.join(s.dir, 'sub');
    await lookalike(path.join(outside, 'big.js'), path.join(sub, 'big.js'), SECRET);
    const file = path.join(sub, 'big.js');
    const real = fs.realpathSync.native(file);
    const fd = fs.openSync(file, 'r');
    try {
      const st = fs.fstatSync(fd);
      expect(await realOfP(fd, file, st)).toBe(real);
      expect(await byName(file, st)).toBe(real); // the fallback where there is no /proc
      await swapForLink(sub, outside);
      // the descriptor still holds the inside file: /proc names it where it is now
      expect(await realOfP(fd, file, st)).toBe(path.join(`${sub}.old`, 'big.js').replace(s.dir, fs.realpathSync.native(s.dir)));
      // by name the path now leads outside, to another file: refused
      expect(await byName(file, st)).toBeNull();
      // and a descriptor opened through the link is outside, by either way of asking
      const fd2 = fs.openSync(file, 'r');
      try {
        const st2 = fs.fstatSync(fd2);
        const out = await realOfP(fd2, file, st2);
        expect(out?.startsWith(fs.realpathSync.native(outside))).toBe(true);
        expect(await byName(file, st2)).toBe(out);
      } finally {
        fs.closeSync(fd2);
      }
    } finally {
      fs.closeSync(fd);
    }
  });

  test.each([
    ['/srv/site/a.js', 'ignore', true], ['/srv/site', 'ignore', true], ['/srv/site-x/a.js', 'ignore', false], ['/srv/a.js', 'ignore', false],
    ['/srv/site/.env', 'ignore', false], ['/srv/site/.git/config', 'deny', false], ['/srv/site/.env', 'allow', true],
    ['/srv/site/..foo', 'ignore', false], ['/srv/site/m.json', 'allow', false], ['/srv/site/.a.js.br.1-ab.pctmp', 'allow', false],
  ])('servableReal(/srv/site, %s, dotfiles %s) → %s', (real, dotfiles, ok) => {
    if (path.sep !== '/') return;
    expect(servableReal('/srv/site', real, { dotfiles, manifestReal: '/srv/site/m.json' })).toBe(ok);
  });
});

describe('FIFOs (item 11)', () => {
  posix('a FIFO in the root (unlisted) is a miss, and does not block the server', async () => {
    const s = await site({ 'index.html': '<p>home</p>' });
    const fifo = mkfifo(path.join(s.dir, 'pipe.txt'));
    const mw = serveStatic(s.dir, { watch: false, unlisted: true });
    const srv = await listen(mw);
    try {
      // more requests than libuv has threads: each one stuck in open() would take one
      const misses = await Promise.all(Array.from({ length: 6 }, () => request(srv.port, '/pipe.txt')));
      expect(misses.map((r) => r.status)).toEqual(Array(6).fill(404));
      expect((await request(srv.port, '/index.html')).status).toBe(200);
    } finally {
      unblock(fifo);
      mw.close();
      await srv.close();
    }
  });

  posix('a FIFO swapped in for a listed file is not waited on', async () => {
    const s = await site({ 'big.js': BIG, 'index.html': '<p>home</p>' });
    const mw = serveStatic(s.dir, { watch: false });
    const srv = await listen(mw);
    const file = path.join(s.dir, 'big.js');
    try {
      await fsp.rename(file, `${file}.old`);
      mkfifo(file);
      const misses = await Promise.all(Array.from({ length: 6 }, () => request(srv.port, '/big.js', { headers: { 'accept-encoding': 'identity' } })));
      expect(misses.map((r) => r.status)).toEqual(Array(6).fill(404));
      expect((await request(srv.port, '/index.html')).status).toBe(200);
    } finally {
      unblock(file);
      mw.close();
      await srv.close();
    }
  });

  posix('a FIFO as the manifest is refused at startup, not waited on', async () => {
    const s = await site({ 'index.html': '<p>home</p>' }, { manifest: null });
    const fifo = mkfifo(path.join(s.dir, 'precompressor-manifest.json'));
    try {
      expect(() => serveStatic(s.dir, { watch: false })).toThrow(/not a regular file/);
    } finally {
      unblock(fifo);
    }
  });
});

describe('the manifest\'s size (item 12)', () => {
  test('a manifest above maxManifestBytes is refused at startup; on reload the current table keeps serving', async () => {
    const s = await site({ 'index.html': '<p>home</p>', 'a.txt': 'a' });
    const size = (await fsp.stat(s.manifestPath)).size;
    expect(() => serveStatic(s.dir, { watch: false, maxManifestBytes: size - 1 })).toThrow(/above the limit.*maxManifestBytes/);
    const mw = serveStatic(s.dir, { watch: false, maxManifestBytes: size });
    const srv = await listen(mw);
    try {
      const m = JSON.parse(await fsp.readFile(s.manifestPath, 'utf8'));
      m.tool = 'x'.repeat(size);
      await fsp.writeFile(s.manifestPath, JSON.stringify(m));
      await expect(mw.reload()).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST' });
      expect((await request(srv.port, '/a.txt')).status).toBe(200);
    } finally {
      mw.close();
      await srv.close();
    }
  });

  test.each([0, -1, 1.5, '1'])('maxManifestBytes %p is refused with the option error', (v) => {
    expect(() => serveStatic('s', { maxManifestBytes: /** @type {any} */ (v) })).toThrow(/Expected options.maxManifestBytes to be a positive integer \(bytes\)/);
  });
});

describe('symlink aliases of dotfiles and of the manifest (item 14)', () => {
  posix.each(['ignore', 'deny'])('dotfiles %s: env.txt → .env is not served, listed or not', async (dotfiles) => {
    const s = await site({ 'index.html': '<p>home</p>', '.env': SECRET, '.git/config': SECRET });
    await fsp.symlink('.env', path.join(s.dir, 'env.txt'));
    await fsp.symlink('.git', path.join(s.dir, 'gitdir'));
    const m = JSON.parse(await fsp.readFile(s.manifestPath, 'utf8'));
    m.files['env.txt'] = { ...m.files['.env'] }; // as a careless build lists it
    await fsp.writeFile(s.manifestPath, JSON.stringify(m));
    const listed = serveStatic(s.dir, { watch: false, dotfiles });
    const unlisted = serveStatic(s.dir, { watch: false, dotfiles, unlisted: true });
    const bare = serveStatic(s.dir, { watch: false, dotfiles, manifest: false });
    const srvs = [await listen(listed), await listen(unlisted), await listen(bare)];
    try {
      for (const srv of srvs) {
        for (const p of ['/env.txt', '/gitdir/config']) {
          const res = await request(srv.port, p);
          expect(res.body.includes(SECRET)).toBe(false);
          expect(res.status).toBe(404);
        }
      }
      // all four are listed; each is checked on its first request (lib/serve/site/site.js), and only index.html passes
      expect(listed.size()).toBe(4);
      expect((await request(srvs[0].port, '/index.html')).status).toBe(200);
    } finally {
      for (const mw of [listed, unlisted, bare]) mw.close();
      for (const srv of srvs) await srv.close();
    }
  });

  posix('dotfiles allow: the alias is served', async () => {
    const s = await site({ 'index.html': '<p>home</p>', '.env': 'VISIBLE' });
    await fsp.symlink('.env', path.join(s.dir, 'env.txt'));
    const mw = serveStatic(s.dir, { watch: false, dotfiles: 'allow', unlisted: true });
    const srv = await listen(mw);
    try {
      expect((await request(srv.port, '/env.txt')).body.toString()).toBe('VISIBLE');
    } finally {
      mw.close();
      await srv.close();
    }
  });

  posix('the manifest is never served: not with manifest: false, not under an alias', async () => {
    const s = await site({ 'index.html': '<p>home</p>' });
    await fsp.symlink('precompressor-manifest.json', path.join(s.dir, 'm.json'));
    const m = JSON.parse(await fsp.readFile(s.manifestPath, 'utf8'));
    m.files['m.json'] = { size: 1, mtimeMs: 0, hash: 'sha256-x', variants: {} };
    await fsp.writeFile(s.manifestPath, JSON.stringify(m));
    const listed = serveStatic(s.dir, { watch: false, dotfiles: 'allow' });
    const bare = serveStatic(s.dir, { watch: false, manifest: false, dotfiles: 'allow' });
    const srvs = [await listen(listed), await listen(bare)];
    try {
      for (const srv of srvs) {
        for (const p of ['/precompressor-manifest.json', '/m.json']) expect((await request(srv.port, p)).status).toBe(404);
      }
    } finally {
      listed.close();
      bare.close();
      for (const srv of srvs) await srv.close();
    }
  });
});

describe('inputs express.static tolerates (item 15)', () => {
  test.each([{ unlisted: true }, { manifest: false }])('a root path too long for the OS falls through (%j), or 404s', async (opts) => {
    const root = path.join(path.sep, 'tmp', 'a'.repeat(5000));
    const mw = serveStatic(root, { watch: false, ...opts });
    const strict = serveStatic(root, { watch: false, fallthrough: false, ...opts });
    try {
      const passed = await new Promise((resolve) => mw({ method: 'GET', url: '/x.txt', headers: {} }, {}, resolve));
      expect(passed).toBeUndefined();
      const err = await new Promise((resolve) => strict({ method: 'GET', url: '/x.txt', headers: {} }, {}, resolve));
      expect(err).toMatchObject({ status: 404 });
    } finally {
      mw.close();
      strict.close();
    }
  });

  test('a manifest whose content type holds CR/LF is refused at startup, not a 500 per request', async () => {
    const s = await site({ 'a.txt': 'a' });
    const m = JSON.parse(await fsp.readFile(s.manifestPath, 'utf8'));
    m.files['a.txt'].type = 'text/plain\r\nSet-Cookie: a=1';
    await fsp.writeFile(s.manifestPath, JSON.stringify(m));
    expect(() => serveStatic(s.dir, { watch: false })).toThrow(/invalid type/);
  });
});
