import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import fsSync from 'node:fs';
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { SERVE_FLAGS, SERVE_DEFAULT_PORT, parsePort } from '../../lib/cli/serve.js';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS } from '../../lib/cli/options.js';
import { unknownFlagsMessage } from '../../lib/cli/cli.js';
import { previewUrls } from '../../lib/serve/adapters/preview.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';
import { writeSite } from '../helpers/site.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';

// `precompressor serve` as a user runs it: real processes on port 0, the URL read from stdout.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const run = (args) => runCommand(process.execPath, [BIN, ...args]);

const SITE = {
  'index.html': `<!doctype html><div id=app></div>${'<p>shell</p>'.repeat(40)}`,
  'app.js': textOf(6000),
  'style.css': textOf(3000, 2),
  '.env': 'SECRET=1\n',
};

let root;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** A site compressed by the real compressor. */
async function compressedSite() {
  await writeTree(root, SITE);
  const report = await precompress(root);
  expect(report.ok).toBe(true);
  return root;
}

/**
 * Start `precompressor serve ...args`; resolves once it printed its URL(s), with the URLs and a
 * stop() that sends SIGTERM and resolves with the exit code.
 */
function startServe(args, env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const exited = new Promise((r) => child.once('close', (code) => r(code)));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      if (!stdout.includes('Press Ctrl+C')) return;
      const urls = stdout.match(/http:\/\/\S+/g) ?? [];
      resolve({ urls, stdout, stop: () => (child.kill('SIGTERM'), exited) });
    });
    exited.then((code) => reject(new Error(`serve exited ${code} before printing its URL:\n${stdout}\n${stderr}`)));
  });
}

function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

const NAV = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

test('serve --help lists its own flags with their defaults, and no compression flag', async () => {
  const r = await run(['serve', '--help']);
  expect(r.code).toBe(0);
  const listed = [...r.stdout.matchAll(/^\s+(?:-[a-z], )?(--[a-z-]+)/gm)].map((m) => m[1]);
  expect(r.stdout).toMatch(/^\s+-p, --port\b/m);
  expect(listed.sort()).toEqual(['--help', '--version', ...SERVE_FLAGS.map((f) => `--${f.flag}`)].sort());
  expect(r.stdout).toContain(`[default: ${SERVE_DEFAULT_PORT}]`);
  const serveOnly = new Set(SERVE_FLAGS.map((f) => f.flag));
  for (const f of [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS].filter((x) => !serveOnly.has(x.flag))) expect(r.stdout).not.toContain(`--${f.flag}`);
});

test.each([
  [['--zstd'], 'Unknown argument: --zstd'],
  [['--watch', '--brotli-quality', '5'], 'Unknown arguments: --watch, --brotli-quality'],
  [['--json'], 'Unknown argument: --json'],
  [['--nope'], 'Unknown argument: --nope'],
  [['--port', 'abc'], 'Expected --port to be an integer from 0 to 65535, got "abc"'],
  [['--port', '70000'], 'Expected --port to be an integer from 0 to 65535, got "70000"'],
  [['--max-age', 'soon'], 'Expected --max-age to be a number of milliseconds or a duration string like "1d", got "soon"'],
  [['--encodings', 'br,xz'], 'Expected --encodings to be an array of distinct encodings among br, zstd, gzip'],
  [['--dotfiles', 'show'], 'Argument: dotfiles, Given: "show", Choices: "ignore", "deny", "allow"'],
  [['--timeout', 'soon'], 'Expected --timeout to be a number of milliseconds or a duration string like "30s", got "soon"'],
  [['--max-connections', '0'], 'Expected --max-connections to be a positive integer, got 0'],
  [['--max-connections', 'many'], 'Expected --max-connections to be a positive integer, got "many"'],
  [['--max-manifest-bytes', '10'], 'bytes, above the limit of 10 bytes: raise --max-manifest-bytes if it is yours'],
])('serve %j: exit 2, the error names the flag', async (args, message) => {
  await compressedSite();
  const r = await run(['serve', root, ...(args.includes('--port') ? [] : ['--port', '0']), ...args]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(message);
  expect(r.stderr).not.toContain('options.');
});

test('no manifest: exit 2 with the CLI flags that help; no folder: exit 2', async () => {
  await writeTree(root, SITE);
  const r = await run(['serve', root, '--port', '0']);
  expect(r.code).toBe(2);
  expect(r.stderr.trim()).toBe(`precompressor: No manifest at ${path.join(root, 'precompressor-manifest.json')}: run "precompressor ${root}" first, pass --manifest with its path, or --unlisted to serve the files without one`);
  const none = await run(['serve', path.join(root, 'nope'), '--port', '0']);
  expect([none.code, none.stderr.trim()]).toEqual([2, `precompressor: no folder at ${path.join(root, 'nope')}`]);
  // a file on the way: ENOTDIR, which `throwIfNoEntry: false` still throws on Node 22.12
  const through = await run(['serve', path.join(root, 'index.html', 'sub'), '--port', '0']);
  expect([through.code, through.stderr.trim()]).toEqual([2, `precompressor: no folder at ${path.join(root, 'index.html', 'sub')}`]);
});

test('--manifest naming a FIFO or a device: exit 2 at once, nothing read from it', async () => {
  if (process.platform === 'win32') return;
  await compressedSite();
  const fifo = path.join(root, 'fifo.json');
  execFileSync('mkfifo', [fifo]);
  try {
    for (const m of [fifo, '/dev/zero']) {
      const r = await run(['serve', root, '--port', '0', '--manifest', m]);
      expect([r.code, r.stderr.trim()]).toEqual([2, `precompressor: Cannot read manifest ${m}: not a regular file`]);
    }
  } finally {
    try {
      fsSync.closeSync(fsSync.openSync(fifo, fsSync.constants.O_WRONLY | fsSync.constants.O_NONBLOCK)); // free a reader, if any
    } catch {
      // no reader
    }
  }
});

test('a port in use: exit 2, says how to pick another', async () => {
  await compressedSite();
  const blocker = net.createServer();
  await new Promise((r) => blocker.listen(0, '127.0.0.1', r));
  try {
    const r = await run(['serve', root, '--port', String(blocker.address().port)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/EADDRINUSE.*: pass another --port, or --port 0 for a free one/);
  } finally {
    blocker.close();
  }
});

test('serves the variants; --spa: the shell for deep links, 404 for missing assets; --max-age/--immutable; SIGTERM exits 0', async () => {
  await compressedSite();
  const s = await startServe([root, '--port', '0', '--spa', '--max-age', '1h', '--immutable']);
  expect(s.urls).toHaveLength(1);
  expect(s.urls[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  expect(s.stdout.split('\n')[0]).toBe(`Serving ${root} at ${s.urls[0]}`);
  const base = s.urls[0];
  const shell = await fs.readFile(path.join(root, 'index.html'));
  try {
    const js = await get(`${base}app.js`, { 'accept-encoding': 'gzip, br' });
    expect([js.status, js.headers['content-encoding'], js.headers['cache-control']]).toEqual([200, 'br', 'public, max-age=3600, immutable']);
    expect(zlib.brotliDecompressSync(js.body).toString()).toBe(SITE['app.js']);

    for (const route of ['some/route', 'users/john.doe', 'deep/link/']) {
      const r = await get(`${base}${route}`, { accept: NAV, 'accept-encoding': 'gzip' });
      expect([route, r.status, r.headers['content-type'], r.headers['content-encoding']]).toEqual([route, 200, 'text/html; charset=utf-8', 'gzip']);
      expect(zlib.gunzipSync(r.body)).toEqual(shell);
    }
    for (const [asset, accept] of [['missing.js', '*/*'], ['missing.css', 'text/css,*/*;q=0.1'], ['api/data', '*/*']]) {
      expect([asset, (await get(`${base}${asset}`, { accept })).status]).toEqual([asset, 404]);
    }
    expect((await get(`${base}.env`, { accept: NAV })).status).toBe(404);
  } finally {
    expect(await s.stop()).toBe(0);
  }
});

test('without --spa a deep link is a 404; --encodings and --dotfiles reach serveStatic', async () => {
  await compressedSite();
  const s = await startServe([root, '--port', '0', '--encodings', 'gzip', '--dotfiles', 'deny']);
  try {
    expect((await get(`${s.urls[0]}some/route`, { accept: NAV })).status).toBe(404);
    const js = await get(`${s.urls[0]}app.js`, { 'accept-encoding': 'br, gzip' });
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(js.headers['cache-control']).toBe('public, max-age=0');
    expect((await get(`${s.urls[0]}.env`)).status).toBe(403);
  } finally {
    expect(await s.stop()).toBe(0);
  }
});

test('as a framework preview: /about finds about.html (--extensions html by default, "" for none), -p and $PORT pick the port', async () => {
  await writeTree(root, { 'about.html': '<h1>about</h1>'.repeat(50) });
  await compressedSite();
  const free = await new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
  const s = await startServe([root], { ...process.env, PORT: String(free) });
  try {
    expect(s.urls[0]).toBe(`http://127.0.0.1:${free}/`);
    const about = await get(`${s.urls[0]}about`, { 'accept-encoding': 'br' });
    expect([about.status, about.headers['content-encoding']]).toEqual([200, 'br']);
  } finally {
    expect(await s.stop()).toBe(0);
  }
  const p = await startServe([root, '-p', '0', '--extensions', ''], { ...process.env, PORT: '1' });
  try {
    expect(p.urls[0]).not.toBe('http://127.0.0.1:1/');
    expect((await get(`${p.urls[0]}about`)).status).toBe(404);
  } finally {
    expect(await p.stop()).toBe(0);
  }
  const bad = await runCommand(process.execPath, [BIN, 'serve', root], { env: { ...process.env, PORT: 'eighty' } });
  expect([bad.code, bad.stderr]).toEqual([2, 'precompressor: Expected $PORT to be an integer from 0 to 65535, got "eighty"\n']);
});

test('--unlisted serves a folder without a manifest, as identity', async () => {
  await writeTree(root, SITE);
  const s = await startServe([root, '--port', '0', '--unlisted']);
  try {
    const js = await get(`${s.urls[0]}app.js`, { 'accept-encoding': 'br' });
    expect([js.status, js.headers['content-encoding'], js.body.toString()]).toEqual([200, undefined, SITE['app.js']]);
  } finally {
    expect(await s.stop()).toBe(0);
  }
});

test('--host 0.0.0.0 prints localhost and every external IPv4 address, and each one answers', async () => {
  await compressedSite();
  const s = await startServe([root, '--port', '0', '--host', '0.0.0.0']);
  try {
    const port = Number(new URL(s.urls[0]).port);
    expect(s.urls).toEqual(previewUrls('0.0.0.0', port, os.networkInterfaces()));
    expect(s.urls[0]).toBe(`http://localhost:${port}/`);
    for (const url of s.urls) expect([url, (await get(`${url}app.js`)).status]).toEqual([url, 200]);
  } finally {
    expect(await s.stop()).toBe(0);
  }
});

test('previewUrls: one URL for a given host; wildcards list what they cover, no link-local IPv6', () => {
  const nics = {
    lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true }, { address: '::1', family: 'IPv6', internal: true }],
    eth0: [{ address: '192.168.1.20', family: 'IPv4', internal: false }, { address: 'fe80::1', family: 'IPv6', internal: false }, { address: '2001:db8::5', family: 'IPv6', internal: false }],
  };
  expect(previewUrls('127.0.0.1', 80, nics)).toEqual(['http://127.0.0.1:80/']);
  expect(previewUrls('::1', 80, nics)).toEqual(['http://[::1]:80/']);
  expect(previewUrls('0.0.0.0', 80, /** @type {any} */ (nics))).toEqual(['http://localhost:80/', 'http://192.168.1.20:80/']);
  expect(previewUrls('::', 80, /** @type {any} */ (nics))).toEqual(['http://localhost:80/', 'http://192.168.1.20:80/', 'http://[2001:db8::5]:80/']);
});

test('parsePort and the unknown-argument message', () => {
  expect([parsePort('0'), parsePort('8080'), parsePort('65535'), parsePort('65536'), parsePort('-1'), parsePort('1.5'), parsePort(''), parsePort('abc')]).toEqual([0, 8080, 65535, null, null, null, null, null]);
  expect(unknownFlagsMessage('Unknown arguments: watch, brotli-quality, brotliQuality, z, extra', ['serve', 'd', '--watch', '--brotli-quality', '5', '-z', 'extra'])).toBe('Unknown arguments: --watch, --brotli-quality, -z, extra (see --help)');
  expect(unknownFlagsMessage('Not enough non-option arguments', [])).toBeNull();
});

test('--manifest: a manifest written elsewhere (relative to <dir>, as when compressing) is served from', async () => {
  await writeTree(root, { ...SITE, 'meta/README': 'build metadata\n' }); // the compressor does not create the folder
  expect((await precompress(root, { manifest: 'meta/variants.json' })).ok).toBe(true);
  const missing = await run(['serve', root, '--port', '0']);
  expect(missing.code).toBe(2);
  const s = await startServe([root, '--port', '0', '--manifest', 'meta/variants.json']);
  try {
    const js = await get(`${s.urls[0]}app.js`, { 'accept-encoding': 'br' });
    expect([js.status, js.headers['content-encoding']]).toEqual([200, 'br']);
    expect(zlib.brotliDecompressSync(js.body).toString()).toBe(SITE['app.js']);
    expect((await get(`${s.urls[0]}meta/variants.json`)).status).toBe(404);
  } finally {
    expect(await s.stop()).toBe(0);
  }
});

test('the site dictionary: linked from pages, served as a dictionary, pages as dcb/dcz against it', async () => {
  const encoders = deltaEncoders();
  if (encoders.length === 0) return console.warn(`skipped: Node ${process.version} has no dictionary encoder`);
  const pages = await writeSite(root, 6);
  expect((await precompress(root, { deltas: false })).failures).toEqual([]);
  const m = JSON.parse(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8'));
  const rel = m.siteDictionary.path;
  const key = m.files[rel].dictionary.hash;
  const s = await startServe([root, '--port', '0']);
  try {
    const home = await get(`${s.urls[0]}`, { accept: NAV, 'accept-encoding': 'br' });
    expect(home.headers.link).toBe(`<./${rel}>; rel="compression-dictionary"`);
    const d = await get(`${s.urls[0]}${rel}`, { 'accept-encoding': 'br' });
    expect([d.headers['use-as-dictionary'], d.headers['cache-control']]).toEqual(['match="*", match-dest=("document")', 'public, max-age=31536000, immutable']);
    const page = pages[1].rel;
    const res = await get(`${s.urls[0]}${page}`, { accept: NAV, 'accept-encoding': `br, ${encoders.join(', ')}`, 'available-dictionary': `:${key}:` });
    const enc = /** @type {'dcb' | 'dcz'} */ (res.headers['content-encoding']);
    expect(encoders).toContain(enc);
    expect(decodeDelta(enc, res.body, await fs.readFile(path.join(root, rel)))).toEqual(await fs.readFile(path.join(root, page)));
  } finally {
    expect(await s.stop()).toBe(0);
  }
});
