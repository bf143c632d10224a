import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { precompress } from '../lib/index.js';
import { tempDir, writeTree, textOf } from './helpers/tmp.js';

// Every example of the README is a file under examples/ (the README block and the file are the
// same text) and runs here as a user runs it: `node examples/x.js` in a project folder with dist/.

/** What a test waits at most for a line or a reload: a regression fails in seconds, not at CI's time limit. */
const WAIT_MS = 15000;
const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

const SITE = {
  'dist/index.html': `<!doctype html><title>app</title>${'<p>hello</p>'.repeat(60)}`,
  'dist/assets/app-3f2a9c.js': textOf(8000),
  'dist/assets/app-3f2a9c.js.map': textOf(4000, 3),
  'dist/robots.txt': 'User-agent: *\nAllow: /\n'.repeat(30),
  'public/docs/guide.txt': textOf(3000, 5),
};

let project;
beforeEach(async () => {
  project = await tempDir('pc-examples-');
  await writeTree(project, SITE);
});
afterEach(async () => {
  await fsp.rm(project, { recursive: true, force: true });
});

/**
 * `node examples/<name>` in the project folder, with a cache folder of its own (each test starts
 * cold, as a fresh project does). `line(re, from)` resolves with the first stdout
 * line from index `from` on that matches `re` (printed already or to come); `stop()` sends
 * SIGTERM and resolves with the exit code.
 */
function start(name) {
  const child = spawn(process.execPath, [path.join(EXAMPLES, name)], { cwd: project, env: { ...process.env, PORT: '0', CACHE_DIR: path.join(project, '.cache') }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = [];
  let stderr = '';
  let buffered = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    buffered += d;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const l of parts) {
      lines.push(l);
      for (const w of waiters.filter((x) => x.re.test(l))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(l);
      }
    }
  });
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  exited.then((code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`${name} exited (${code}) before printing ${w.re}:\n${lines.join('\n')}\n${stderr}`));
  });
  // bounded: a line that never comes fails the test in seconds instead of stalling the run
  const line = (re, from = 0) => {
    const seen = lines.slice(from).find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = { re, resolve: (l) => (clearTimeout(timer), resolve(l)), reject: (e) => (clearTimeout(timer), reject(e)) };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(w), 1);
        reject(new Error(`${name} printed no line matching ${re} within ${WAIT_MS} ms:\n${lines.join('\n')}\n${stderr}`));
      }, WAIT_MS);
      waiters.push(w);
    });
  };
  return { lines, line, exited, stderr: () => stderr, stop: () => (child.kill('SIGTERM'), exited) };
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

const decoded = (r) => (r.headers['content-encoding'] === 'br' ? zlib.brotliDecompressSync(r.body) : r.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(r.body) : r.body);
const site = (rel) => fs.readFileSync(path.join(project, rel));

/** The server answers on 127.0.0.1 only: a connection to an external address of the machine is refused. */
async function externalRefused(port) {
  const external = Object.values(os.networkInterfaces()).flat().find((a) => a && !a.internal && a.family === 'IPv4');
  if (!external) return true; // no external interface on this machine: nothing to check
  return new Promise((resolve) => {
    const s = net.connect(port, external.address);
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (err) => resolve(/** @type {any} */ (err).code === 'ECONNREFUSED'));
  });
}

test('every README (or docs/) example is a file under examples/, word for word, and every file is in the README or docs/', () => {
  const docs = fs.readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => fs.readFileSync(new URL(`../docs/${f}`, import.meta.url), 'utf8'));
  const blocks = [...[readme, ...docs].join('\n').matchAll(/```js\n(\/\/ examples\/([\w-]+\.js)[^\n]*\n[\s\S]*?)```/g)].map((m) => [m[2], m[1]]);
  const files = fs.readdirSync(EXAMPLES).filter((f) => f.endsWith('.js')).sort();
  expect([...new Set(blocks.map(([name]) => name))].sort()).toEqual(files);
  for (const [name, text] of blocks) expect([name, text]).toEqual([name, fs.readFileSync(path.join(EXAMPLES, name), 'utf8')]);
});

test('precompress.js compresses dist/ (source maps excluded) and exits 0', async () => {
  const p = start('precompress.js');
  expect(await p.exited).toBe(0);
  expect(p.lines).toEqual(['3 compressed, 0 unchanged']);
  expect(zlib.brotliDecompressSync(site('dist/assets/app-3f2a9c.js.br'))).toEqual(site('dist/assets/app-3f2a9c.js'));
  expect(fs.existsSync(path.join(project, 'dist/assets/app-3f2a9c.js.map.br'))).toBe(false);
});

test('express.js: br from dist/, a year for hashed assets only, public/ under /static, on 127.0.0.1 only', async () => {
  for (const dir of ['dist', 'public']) expect((await precompress(path.join(project, dir))).ok).toBe(true);
  const p = start('express.js');
  try {
    const url = await p.line(/^http:/);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const js = await get(`${url}assets/app-3f2a9c.js`, { 'accept-encoding': 'br' });
    expect([js.status, js.headers['content-encoding'], js.headers['cache-control']]).toEqual([200, 'br', 'public, max-age=31536000, immutable']);
    expect(decoded(js)).toEqual(site('dist/assets/app-3f2a9c.js'));
    const html = await get(url, { 'accept-encoding': 'gzip' });
    expect([html.status, html.headers['content-encoding'], html.headers['cache-control']]).toEqual([200, 'gzip', 'public, max-age=0']);
    expect(decoded(html)).toEqual(site('dist/index.html'));
    const guide = await get(`${url}static/docs/guide.txt`, { 'accept-encoding': 'br' });
    expect(decoded(guide)).toEqual(site('public/docs/guide.txt'));
    expect(guide.headers['content-encoding']).toBe('br');
    expect(await externalRefused(Number(new URL(url).port))).toBe(true);
  } finally {
    await p.stop();
  }
});

test('node-http.js: serves the variants on 127.0.0.1 only', async () => {
  expect((await precompress(path.join(project, 'dist'))).ok).toBe(true);
  const p = start('node-http.js');
  try {
    const url = await p.line(/^http:/);
    const r = await get(`${url}robots.txt`, { 'accept-encoding': 'gzip, br' });
    expect([r.status, r.headers['content-encoding']]).toEqual([200, 'br']);
    expect(decoded(r)).toEqual(site('dist/robots.txt'));
    expect((await get(`${url}nope.js`)).status).toBe(404);
    expect(await externalRefused(Number(new URL(url).port))).toBe(true);
  } finally {
    await p.stop();
  }
});

test('watch.js: compresses, recompresses a changed file, exits 0 on SIGTERM', async () => {
  const p = start('watch.js');
  await p.line(/^watching dist$/);
  expect(p.lines).toContain('compress assets/app-3f2a9c.js');
  const before = p.lines.length;
  await fsp.writeFile(path.join(project, 'dist/robots.txt'), 'User-agent: *\nDisallow: /private/\n'.repeat(40));
  await p.line(/^compress robots\.txt$/, before);
  expect(zlib.brotliDecompressSync(site('dist/robots.txt.br'))).toEqual(site('dist/robots.txt'));
  expect(await p.stop()).toBe(0);
});

test('dev-server.js: one pass at its own settings (a restart compresses nothing), serves each change, 127.0.0.1 only', async () => {
  const first = start('dev-server.js');
  await first.line(/^http:/);
  const compressed = first.lines.filter((l) => l.startsWith('compress '));
  expect(compressed.sort()).toEqual(['compress assets/app-3f2a9c.js', 'compress assets/app-3f2a9c.js.map', 'compress index.html', 'compress robots.txt']);
  expect(await first.stop()).toBe(0);

  // Restarted on the same dist/: nothing to do, because the settings did not change.
  const p = start('dev-server.js');
  try {
    const url = await p.line(/^http:/);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(p.lines).toEqual([url]);
    expect(await externalRefused(Number(new URL(url).port))).toBe(true);
    const js = await get(`${url}assets/app-3f2a9c.js`, { 'accept-encoding': 'br' });
    expect(js.headers['content-encoding']).toBe('br');
    expect(decoded(js)).toEqual(site('dist/assets/app-3f2a9c.js'));

    // A rebuild rewrites index.html: the batch compresses it, and every response is the new file.
    const next = `<!doctype html><title>app</title>${'<p>rebuilt</p>'.repeat(60)}`;
    const before = p.lines.length;
    await fsp.writeFile(path.join(project, 'dist/index.html'), next);
    await p.line(/^compress index\.html$/, before);
    // Until serveStatic has reloaded the manifest (bounded: a server that never does fails here).
    const deadline = Date.now() + WAIT_MS;
    let r;
    do {
      r = await get(url, { 'accept-encoding': 'br' });
      expect(decoded(r).toString()).toBe(next); // never the old page, compressed or not
      if (r.headers['content-encoding'] === 'br') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    } while (Date.now() < deadline);
    expect(r.headers['content-encoding']).toBe('br'); // the br variant within WAIT_MS of the batch
  } finally {
    expect(await p.stop()).toBe(0);
  }
});

test.each([
  ['koa.js', '/nope.js', 404, 'not found here'],
  ['fastify.js', '/api/hello', 200, '{"hello":"world"}'],
  ['hono.js', '/api/hello', 200, '{"hello":"world"}'],
])('%s: br from dist/, the manifest a 404, what it does not serve reaches the framework', async (name, other, status, body) => {
  expect((await precompress(path.join(project, 'dist'))).ok).toBe(true);
  const p = start(name);
  try {
    const url = await p.line(/^http:/);
    const js = await get(`${url}assets/app-3f2a9c.js`, { 'accept-encoding': 'gzip, br' });
    expect([js.status, js.headers['content-encoding']]).toEqual([200, 'br']);
    expect(decoded(js)).toEqual(site('dist/assets/app-3f2a9c.js'));
    const html = await get(url, { 'accept-encoding': 'gzip' });
    expect([html.status, html.headers['content-encoding']]).toEqual([200, 'gzip']);
    expect(decoded(html)).toEqual(site('dist/index.html'));
    expect((await get(`${url}precompressor-manifest.json`)).status).toBe(404);
    const r = await get(`${url}${other.slice(1)}`);
    expect([r.status, r.body.toString()]).toEqual([status, body]);
  } finally {
    await p.stop();
  }
});
