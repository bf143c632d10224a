import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import precompressor, { placeAfterViteGuards, splitViteOptions, summaryLines } from '../../plugins/vite.js';
import { otherCompressors, frameworkOf } from '../../plugins/frameworks.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';

// A real `vite build` (and `vite preview`) on a small app generated in a temp folder.

let tmp;
beforeAll(async () => {
  tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-vite-'));
});
afterAll(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

let appCount = 0;
/** Write a small app: index.html, src/ (JS + CSS), public/ (text, JSON, PNG), an SSR entry. */
async function makeApp() {
  const root = path.join(tmp, `app${++appCount}`);
  const files = {
    'index.html': '<!doctype html>\n<html><head><title>fixture</title></head><body>\n<div id="app"></div>\n<script type="module" src="/src/main.js"></script>\n</body></html>\n',
    'src/main.js': `import './style.css';\nimport { words } from './words.js';\ndocument.getElementById('app').textContent = words.join(' ');\n`,
    'src/words.js': `export const words = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `word${i % 37}`))};\n`,
    'src/style.css': Array.from({ length: 60 }, (_, i) => `.c${i} { color: #${String(i).padStart(6, '0')}; margin: ${i}px; }`).join('\n') + '\n',
    'src/entry-server.js': `export function render() { return ${JSON.stringify('<p>server</p>'.repeat(50))}; }\n`,
    'public/robots.txt': 'User-agent: *\nDisallow: /private/\n'.repeat(20),
    'public/data/catalog.json': JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i % 13}` }))),
  };
  for (const [rel, text] of Object.entries(files)) {
    await fsp.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fsp.writeFile(path.join(root, rel), text);
  }
  await fsp.writeFile(path.join(root, 'public/logo.png'), Buffer.from('89504e470d0a1a0a' + '00'.repeat(300), 'hex'));
  // A project of its own: the caches go to its node_modules/.cache/precompressor (see projectEnv).
  await fsp.writeFile(path.join(root, 'package.json'), '{ "name": "fixture-app", "private": true }\n');
  return root;
}

const HELPER = fileURLToPath(new URL('../helpers/vite-run.js', import.meta.url));

/**
 * The test's environment without the setup's CACHE_DIR: the caches are then found as in a real
 * project, in the app's own node_modules/.cache/precompressor (each app starts with an empty one).
 */
function projectEnv() {
  const env = { ...process.env };
  delete env.CACHE_DIR;
  return env;
}

/**
 * Run a Vite job in a child process (see helpers/vite-run.js); resolves with its last JSON line
 * and the whole stdout. For `preview`, resolves at the first line and returns the child.
 */
function runVite(job) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HELPER, JSON.stringify(job)], { env: projectEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (job.mode === 'preview' && stdout.includes('\n')) resolve({ result: JSON.parse(stdout.split('\n')[0]), child });
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve({ result: JSON.parse(last), stdout, code });
      } catch {
        reject(new Error(`vite-run exited ${code} without a result:\n${stdout}\n${stderr}`));
      }
    });
  });
}

/** Run node with `args` in `cwd`, as in a project (see projectEnv). */
function runCommandIn(cwd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: projectEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function readJSON(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function listFiles(dir) {
  return fs.readdirSync(dir, { recursive: true }).map((p) => p.split(path.sep).join('/')).filter((p) => fs.statSync(path.join(dir, p)).isFile()).sort();
}

/** Build and return the result; throws when the build failed. */
async function viteBuild(root, plugin = {}, config = {}) {
  const { result } = await runVite({ mode: 'build', root, plugin, config });
  if (!result.ok) throw new Error(result.error.message);
  return result.lines;
}

describe('vite build', () => {
  test("compresses the written output, public/ files included, and keeps Vite's build.manifest", async () => {
    const root = await makeApp();
    const lines = await viteBuild(root, {}, { build: { manifest: true } });
    const dist = path.join(root, 'dist');
    const files = listFiles(dist);
    const manifest = readJSON(path.join(dist, 'precompressor-manifest.json'));

    const js = files.find((f) => /^assets\/index-.*\.js$/.test(f));
    const css = files.find((f) => /^assets\/index-.*\.css$/.test(f));
    for (const rel of [js, css, 'index.html', 'robots.txt', 'data/catalog.json']) {
      expect(manifest.files[rel]).toBeDefined();
      const original = fs.readFileSync(path.join(dist, rel));
      expect(zlib.brotliDecompressSync(fs.readFileSync(path.join(dist, `${rel}.br`)))).toEqual(original);
      expect(zlib.gunzipSync(fs.readFileSync(path.join(dist, `${rel}.gz`)))).toEqual(original);
    }
    expect(manifest.files['logo.png']).toMatchObject({ skipped: 'compressed-format', variants: {} });
    expect(files).not.toContain('logo.png.br');

    // Vite's own manifest is intact (in a dot folder: neither listed nor compressed by default).
    const viteManifest = readJSON(path.join(dist, '.vite/manifest.json'));
    expect(viteManifest['index.html'].file).toBe(js);
    expect(files).not.toContain('.vite/manifest.json.br');

    expect(lines.filter((l) => l.startsWith('precompressor: ') && !/^precompressor: (deltas|site dictionary): /.test(l))).toEqual([expect.stringMatching(/^precompressor: 5 compressed, 0 unchanged, 6 files in /)]);
  });

  test('the summary goes through Vite\'s logger, so logLevel applies', async () => {
    const root = await makeApp();
    const info = await runVite({ mode: 'build', root, plugin: {}, realLogger: true, config: { logLevel: 'info' } });
    expect(info.stdout).toMatch(/precompressor: 5 compressed/);
    const warn = await runVite({ mode: 'build', root, plugin: {}, realLogger: true, config: { logLevel: 'warn' } });
    expect(warn.result.ok).toBe(true);
    expect(warn.stdout).not.toMatch(/precompressor:/);
  });

  test('a second build takes the variants of files whose content did not change from the cache, although Vite emptied outDir', async () => {
    const root = await makeApp();
    await viteBuild(root);
    const before = readJSON(path.join(root, 'dist/precompressor-manifest.json'));
    await fsp.writeFile(path.join(root, 'public/robots.txt'), 'User-agent: *\nAllow: /\n'.repeat(30));

    const lines = await viteBuild(root, { verbose: true });
    const after = readJSON(path.join(root, 'dist/precompressor-manifest.json'));
    expect(lines.filter((l) => l.startsWith('  compress '))).toEqual(['  compress robots.txt']);
    expect(lines.filter((l) => l.startsWith('  from cache ')).sort()).toEqual(Object.keys(before.files).filter((f) => f !== 'robots.txt' && f !== 'logo.png').sort().map((f) => `  from cache ${f}`));
    expect(lines).toContainEqual(expect.stringMatching(/^precompressor: 1 compressed, 4 from cache, 0 unchanged, 6 files in /));
    expect(lines).toContainEqual(expect.stringMatching(/^precompressor: cache: 8 of 10 outputs from the cache, /));
    expect(after.files['robots.txt'].hash).not.toBe(before.files['robots.txt'].hash);
    expect(after.files['index.html'].hash).toBe(before.files['index.html'].hash);
    for (const rel of ['robots.txt', 'index.html']) {
      const original = fs.readFileSync(path.join(root, 'dist', rel));
      expect(zlib.brotliDecompressSync(fs.readFileSync(path.join(root, 'dist', `${rel}.br`)))).toEqual(original);
    }
  });

  test('public/sitemap.xml.gz of the user\'s beside public/sitemap.xml: listed as itself, never overwritten, one warning through Vite\'s logger per build', async () => {
    const root = await makeApp();
    const mine = zlib.gzipSync(`<?xml version="1.0"?><urlset>${'<url><loc>https://example.com/page</loc></url>'.repeat(500)}</urlset>`);
    await fsp.writeFile(path.join(root, 'public/sitemap.xml'), `<?xml version="1.0"?><urlset>${'<url><loc>https://example.com/</loc></url>'.repeat(40)}</urlset>`);
    await fsp.writeFile(path.join(root, 'public/sitemap.xml.gz'), mine);
    const dist = path.join(root, 'dist');
    for (const build of [1, 2]) {
      const lines = await viteBuild(root, {}, { build: { emptyOutDir: build === 1 } });
      expect(lines.filter((l) => l.startsWith('warn: '))).toEqual([
        'warn: precompressor: sitemap.xml.gz: not written by precompressor: kept as your own file and served as itself; ' +
          'sitemap.xml gets no .gz variant. To resolve: rename or remove sitemap.xml.gz, or exclude sitemap.xml',
      ]);
      expect(fs.readFileSync(path.join(dist, 'sitemap.xml.gz'))).toEqual(mine);
      const m = readJSON(path.join(dist, 'precompressor-manifest.json'));
      expect(Object.keys(m.files['sitemap.xml'].variants)).toEqual(['br']);
      expect(m.files['sitemap.xml.gz']).toMatchObject({ size: mine.length, variants: {} });
    }
    expect(fs.readFileSync(path.join(root, 'public/sitemap.xml.gz'))).toEqual(mine);
  });

  (deltaEncoders().length > 0 ? test : test.skip)('deploy deltas: the store outside outDir gives the changed bundle a delta; a rebuild without changes keeps it as it is', async () => {
    const root = await makeApp();
    // a bundle that Brotli alone cannot shrink to nothing: 24 kB of pseudo-random words
    let x = 7;
    const words = Array.from({ length: 3000 }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff), `w${x % 5000}`));
    await fsp.writeFile(path.join(root, 'src/data.js'), `export const data = ${JSON.stringify(words)};\n`);
    await fsp.writeFile(path.join(root, 'src/main.js'), `import { data } from './data.js';\ndocument.getElementById('app').textContent = data.join(' ');\n`);
    await viteBuild(root);
    await fsp.appendFile(path.join(root, 'src/main.js'), 'console.log(data.length);\n');
    const lines = await viteBuild(root);
    const dist = path.join(root, 'dist');
    const m = readJSON(path.join(dist, 'precompressor-manifest.json'));
    const js = /** @type {string} */ (Object.keys(m.files).find((f) => /^assets\/index-.*\.js$/.test(f)));
    expect(m.files[js].dictionary).toMatchObject({ match: 'index-*.js', dest: 'script', hashed: true });
    expect(Object.keys(m.files[js].deltas ?? {})).toHaveLength(1);
    expect(lines).toContainEqual(expect.stringMatching(/^precompressor: deltas: 1 servable file \(\d written\); a returning visitor downloads /));
    const deltaFiles = listFiles(dist).filter((f) => /\.dc[bz]$/.test(f));
    expect(deltaFiles.length).toBeGreaterThan(0);

    // Vite emptied outDir again: the same deltas come back from the variant cache, none is encoded.
    const again = await viteBuild(root, { verbose: true });
    expect(again.filter((l) => l.startsWith('  delta') && !/^ {2}delta \(dc[bz], from cache\) /.test(l))).toEqual([]);
    expect(again.filter((l) => l.startsWith('  delta')).length).toBeGreaterThan(0);
    expect(listFiles(dist).filter((f) => /\.dc[bz]$/.test(f))).toEqual(deltaFiles);
    expect(readJSON(path.join(dist, 'precompressor-manifest.json')).files[js].deltas).toEqual(m.files[js].deltas);
  });

  (deltaEncoders().length > 0 ? test : test.skip)('hashes where the bundle put them: a [name]~[hash] scheme no default rule knows keeps its families across two builds', async () => {
    const root = await makeApp();
    let x = 11;
    const words = Array.from({ length: 3000 }, () => ((x = (x * 1103515245 + 12345) & 0x7fffffff), `w${x % 5000}`));
    await fsp.writeFile(path.join(root, 'src/data.js'), `export const data = ${JSON.stringify(words)};\n`);
    await fsp.writeFile(path.join(root, 'src/main.js'), `import './style.css';\nimport('./data.js').then(({ data }) => { document.getElementById('app').textContent = data.join(' '); });\n`);
    const output = { entryFileNames: 'js/[name]~[hash].js', chunkFileNames: 'js/[hash:10].js', assetFileNames: 'css/[name]~[hash][extname]' };
    const config = { build: { rollupOptions: { output } } };
    await viteBuild(root, {}, config);
    const first = readJSON(path.join(root, 'dist/precompressor-manifest.json')).files;
    await fsp.appendFile(path.join(root, 'src/main.js'), 'console.log(1);\n');
    await fsp.appendFile(path.join(root, 'src/data.js'), 'console.log(2);\n');
    await viteBuild(root, {}, config);
    const m = readJSON(path.join(root, 'dist/precompressor-manifest.json')).files;
    const entry = /** @type {string} */ (Object.keys(m).find((f) => /^js\/index~[\w-]{8}\.js$/.test(f)));
    const css = /** @type {string} */ (Object.keys(m).find((f) => /^css\/index~[\w-]{8}\.css$/.test(f)));
    const chunk = /** @type {string} */ (Object.keys(m).find((f) => /^js\/[\w-]{10}\.js$/.test(f)));
    expect(m[css].dictionary).toMatchObject({ match: 'index~*.css', dest: 'style', hashed: true });
    expect(m[entry].dictionary).toMatchObject({ match: 'index~*.js', dest: 'script', hashed: true });
    expect(Object.keys(first)).not.toContain(entry); // the entry changed (it names the chunk)…
    expect(Object.keys(m[entry].deltas ?? {})).toHaveLength(1); // …and was paired with its first version
    // A chunk named only by its hash has no stable part to be recognised by: paired with its first version by content.
    expect(m[chunk].dictionary).toMatchObject({ match: '*.js', dest: 'script', hashed: true });
    expect(Object.keys(first)).not.toContain(chunk);
    const firstChunk = /** @type {string} */ (Object.keys(first).find((f) => /^js\/[\w-]{10}\.js$/.test(f)));
    expect(Object.keys(m[chunk].deltas ?? {})).toEqual([first[firstChunk].dictionary.hash]);
  });

  test('another compression plugin in the build is named once, with what to do', async () => {
    const root = await makeApp();
    const { result } = await runVite({ mode: 'build', root, plugin: {}, config: {}, namedPlugin: 'vite:compression' });
    expect(result.ok).toBe(true);
    const warned = result.lines.filter((/** @type {string} */ l) => l.includes('also compress'));
    expect(warned).toEqual(['warn: precompressor: vite:compression also compresses the build output: two tools then write .br/.gz beside the same files, ' +
      'and whichever runs last decides what is sent (serveStatic says so at start-up when they differ from its manifest); remove it: precompressor makes Brotli 11 and gzip 9 with a manifest']);
  });

  test('build --watch: a rebuild recompresses what changed; variants of files that are gone go too', async () => {
    const root = await makeApp();
    const dist = path.join(root, 'dist');
    const edit = { file: 'src/words.js', text: 'export const words = ["changed", "words"];\n' };
    const { result } = await runVite({ mode: 'watch', root, plugin: { verbose: true }, edit });
    expect(result.error).toBeUndefined();
    const [first, second] = result.snapshots;
    const jsOf = (files) => files.find((f) => /^assets\/index-.*\.js$/.test(f));
    const oldJs = jsOf(first.files);
    const newJs = jsOf(second.files);
    expect(newJs).not.toBe(oldJs);
    expect(first.files).toContain(`${oldJs}.br`);
    expect(second.files).not.toContain(`${oldJs}.br`);
    expect(second.files).not.toContain(`${oldJs}.gz`);
    expect(second.files).toEqual(expect.arrayContaining([`${newJs}.br`, `${newJs}.gz`, 'robots.txt.br', 'data/catalog.json.br']));
    // Only the new chunk and the HTML that points at it were compressed again.
    expect(second.lines.filter((l) => l.startsWith('  compress ')).sort()).toEqual([`  compress ${newJs}`, '  compress index.html']);
    const manifest = readJSON(path.join(dist, 'precompressor-manifest.json'));
    expect(manifest.files[oldJs]).toBeUndefined();
    expect(Object.keys(manifest.files[newJs].variants).length).toBeGreaterThan(0);
    expect(zlib.gunzipSync(fs.readFileSync(path.join(dist, `${newJs}.gz`)))).toEqual(fs.readFileSync(path.join(dist, newJs)));
  });

  test('postbuild flow (vite build, then the CLI): the second build takes every variant from the cache, a changed file is the only one compressed', async () => {
    const root = await makeApp();
    const dist = path.join(root, 'dist');
    const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
    const postbuild = async () => {
      const { result } = await runVite({ mode: 'build', root, plugin: false, config: { logLevel: 'warn' } });
      expect(result.ok).toBe(true);
      expect(fs.existsSync(path.join(dist, 'precompressor-manifest.json'))).toBe(false); // emptied by Vite
      const cli = await runCommandIn(root, [BIN, 'dist', '--json', '--no-deltas']);
      expect(cli.code).toBe(0);
      return JSON.parse(cli.stdout);
    };
    const cold = await postbuild();
    expect(cold.files).toMatchObject({ compressed: 5, fromCache: 0 });
    const warm = await postbuild();
    expect(warm.files).toMatchObject({ compressed: 0, fromCache: 5 });
    expect(warm.cache).toMatchObject({ dir: path.join(root, 'node_modules', '.cache', 'precompressor', 'variants'), hits: 10, misses: 0 });
    for (const rel of Object.keys(readJSON(path.join(dist, 'precompressor-manifest.json')).files).filter((f) => f !== 'logo.png')) {
      expect(zlib.brotliDecompressSync(fs.readFileSync(path.join(dist, `${rel}.br`)))).toEqual(fs.readFileSync(path.join(dist, rel)));
      expect(zlib.gunzipSync(fs.readFileSync(path.join(dist, `${rel}.gz`)))).toEqual(fs.readFileSync(path.join(dist, rel)));
    }
    await fsp.writeFile(path.join(root, 'public/data/catalog.json'), JSON.stringify({ changed: true, items: Array.from({ length: 50 }, (_, i) => i) }));
    const changed = await postbuild();
    expect(changed.changes.filter((c) => c.action === 'compress')).toEqual([{ path: 'data/catalog.json', action: 'compress' }]);
    expect(changed.files).toMatchObject({ compressed: 1, fromCache: 4 });
  });

  test('SSR builds are left alone unless ssr: true', async () => {
    const root = await makeApp();
    const config = { build: { ssr: 'src/entry-server.js', outDir: 'dist-server' } };
    const out = path.join(root, 'dist-server');
    await viteBuild(root, {}, config);
    const files = listFiles(out);
    expect(files).toContain('entry-server.mjs');
    expect(files.filter((f) => /\.(br|gz)$|precompressor-manifest/.test(f))).toEqual([]);
    await viteBuild(root, { ssr: true }, config);
    expect(listFiles(out)).toEqual(expect.arrayContaining(['entry-server.mjs.br', 'entry-server.mjs.gz', 'precompressor-manifest.json']));
    expect(zlib.brotliDecompressSync(fs.readFileSync(path.join(out, 'entry-server.mjs.br')))).toEqual(fs.readFileSync(path.join(out, 'entry-server.mjs')));
  });

  test("the manifest goes only inside outDir, over no file of the user's (public/precompressor-manifest.json, package.json)", async () => {
    const root = await makeApp();
    await fsp.writeFile(path.join(root, 'public/precompressor-manifest.json'), '{"mine": true}\n');
    await expect(viteBuild(root, { cache: false })).rejects.toThrow(/Refusing to write the manifest over .*precompressor-manifest\.json: it is another file/);
    expect(fs.readFileSync(path.join(root, 'dist/precompressor-manifest.json'), 'utf8')).toBe('{"mine": true}\n');
    await fsp.rm(path.join(root, 'public/precompressor-manifest.json'));
    await expect(viteBuild(root, { manifest: '../package.json', cache: false })).rejects.toThrow(/outside the output folder/);
    await expect(viteBuild(root, { manifest: '../elsewhere.json', cache: false })).rejects.toThrow(/outside the output folder/);
    expect(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).toBe('{ "name": "fixture-app", "private": true }\n');
    expect(fs.existsSync(path.join(root, 'elsewhere.json'))).toBe(false);
  });

  test('a failure fails the build through this.error, naming the file', async () => {
    const root = await makeApp();
    // The manifest cannot be written under a file: a failure the report names.
    await expect(viteBuild(root, { manifest: 'robots.txt/precompressor-manifest.json', cache: false })).rejects.toThrow(
      /precompressor: some files could not be compressed:\n {2}.*robots\.txt\/precompressor-manifest\.json: /,
    );
  });
});

describe('options', () => {
  test('compressor options are checked by the same normalizeOptions, when the config loads', () => {
    expect(() => precompressor({ brotliQuality: 12 })).toThrow(expect.objectContaining({ code: 'ERR_PRECOMPRESSOR_OPTION', message: 'Expected options.brotliQuality to be an integer from 0 to 11, got 12 (number)' }));
    expect(() => precompressor({ ssr: 'yes' })).toThrow('Expected options.ssr to be a boolean, got "yes" (string)');
    expect(() => precompressor({ preview: 1 })).toThrow(/Expected options.preview to be a boolean or an object of serveStatic options/);
    expect(() => precompressor({ nope: 1 })).toThrow(/Expected options.nope to be one of the known options \(.*cache, cacheDir, cacheMaxSize, .*ssr, preview, verbose\)/);
    // `cache` is the compressor's option (the variant cache), no longer the plugin's own
    expect(splitViteOptions({ encodings: ['br'], verbose: true, cache: false })).toEqual({ api: { encodings: ['br'], cache: false }, own: { ssr: false, preview: true, verbose: true } });
  });

  test('the summary names what was compressed and the sizes', () => {
    const report = { files: { compressed: 2, unchanged: 3, scanned: 6 }, durationMs: 12, encodings: ['br', 'gzip'], bytes: { compressible: 12000, br: 3000, gzip: 4000 }, changes: [{ path: 'a.js', action: 'compress' }] };
    expect(summaryLines(report, false)).toEqual(['precompressor: 2 compressed, 3 unchanged, 6 files in 12 ms; 12.0 kB compressible → br 3.00 kB, gzip 4.00 kB']);
    expect(summaryLines(report, true)[1]).toBe('  compress a.js');
  });
});

const serveReady = fs.existsSync(new URL('../../lib/serve/adapters/middleware.js', import.meta.url));

function get(url, headers) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

(serveReady ? describe : describe.skip)('vite preview', () => {
  test('serves the precompressed variants through serveStatic', async () => {
    const root = await makeApp();
    await viteBuild(root);
    const { result, child } = await runVite({ mode: 'preview', root, plugin: {} });
    try {
      const origin = `http://127.0.0.1:${result.port}`;
      const dist = path.join(root, 'dist');
      const js = listFiles(dist).find((f) => /^assets\/index-.*\.js$/.test(f));

      const br = await get(`${origin}/${js}`, { 'accept-encoding': 'gzip, br' });
      expect(br.status).toBe(200);
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toMatch(/accept-encoding/i);
      expect(Number(br.headers['content-length'])).toBe(br.body.length);
      expect(zlib.brotliDecompressSync(br.body)).toEqual(fs.readFileSync(path.join(dist, js)));

      const html = await get(`${origin}/`, { 'accept-encoding': 'gzip' });
      expect(html.status).toBe(200);
      expect(html.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(html.body).toString()).toBe(fs.readFileSync(path.join(dist, 'index.html'), 'utf8'));

      const plain = await get(`${origin}/robots.txt`, { 'accept-encoding': 'identity' });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body).toEqual(fs.readFileSync(path.join(dist, 'robots.txt')));
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});

function request(port, method, urlPath, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Status and CORS headers: what must not change when the plugin serves the file. */
const guardView = (r) => ({ status: r.status, ...Object.fromEntries(Object.entries(r.headers).filter(([k]) => k.startsWith('access-control-'))) });

/** The requests that exercise Vite's host check and CORS on one path. */
const GUARD_REQUESTS = [
  ['GET', { host: 'evil.example.com' }],
  ['GET', { host: 'evil.example.com:80' }],
  ['GET', { origin: 'http://localhost:5173' }],
  ['GET', { origin: 'http://evil.example.com' }],
  ['OPTIONS', { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' }],
  ['OPTIONS', { origin: 'http://evil.example.com', 'access-control-request-method': 'GET' }],
];

async function withPreview(job, fn) {
  const { result, child } = await runVite({ mode: 'preview', ...job });
  try {
    return await fn(result.port);
  } finally {
    child.stdin.end();
    await new Promise((resolve) => child.once('close', resolve));
  }
}

// Every Vite major the peer range (>=5) allows, installed side by side as dev dependencies.
(serveReady ? describe : describe.skip)("vite preview keeps Vite's host check and CORS", () => {
  test.each([['vite5'], ['vite6'], ['vite7'], ['vite']])('%s: 403 for a foreign Host, the same CORS answers as without the plugin, variants for allowed hosts', async (vite) => {
    const root = await makeApp();
    const { result: built } = await runVite({ mode: 'build', root, plugin: {}, vite });
    expect(built.error).toBeUndefined();
    const config = { preview: { allowedHosts: ['app.example.com'] } };
    const file = '/robots.txt';
    const original = fs.readFileSync(path.join(root, 'dist/robots.txt'));
    const ask = (port) => Promise.all(GUARD_REQUESTS.map(([method, headers]) => request(port, method, file, { 'accept-encoding': 'br', ...headers })));

    const without = await withPreview({ root, plugin: false, vite, config }, ask);
    const withPlugin = await withPreview({ root, plugin: {}, vite, config }, async (port) => {
      const answers = await ask(port);
      for (const host of [`127.0.0.1:${port}`, 'app.example.com']) {
        const r = await request(port, 'GET', file, { host, 'accept-encoding': 'br' });
        expect([host, r.status, r.headers['content-encoding']]).toEqual([host, 200, 'br']);
        expect(zlib.brotliDecompressSync(r.body)).toEqual(original);
      }
      return answers;
    });

    expect(without.map(guardView).slice(0, 2)).toEqual([{ status: 403 }, { status: 403 }]);
    expect(without[2].headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(withPlugin.map(guardView)).toEqual(without.map(guardView));
    // The variant is what the plugin adds, on the requests that got through Vite's guards.
    expect(withPlugin[2].headers['content-encoding']).toBe('br');
    expect(without[2].headers['content-encoding']).toBeUndefined();
  });
});

test('placeAfterViteGuards: after the guards that come later (Vite 5/6), in place otherwise (7/8); refuses a stack without CORS', () => {
  const named = (name) => ({ [name]: () => {} })[name];
  const ours = named('precompressorPreview');
  const entries = (...fns) => fns.map((handle) => ({ route: '', handle }));
  const [cors, host, sirv, cors7, host7] = ['corsMiddleware', 'viteHostCheckMiddleware', 'viteAssetMiddleware', 'corsMiddleware$2', 'hostValidationMiddleware$1$1'].map(named);

  const v5 = entries(ours, cors, host, sirv);
  expect(placeAfterViteGuards(v5, ours, true)).toBe(true);
  expect(v5.map((e) => e.handle)).toEqual([cors, host, ours, sirv]);

  const v7 = entries(cors7, host7, ours, sirv);
  expect(placeAfterViteGuards(v7, ours, true)).toBe(true);
  expect(v7.map((e) => e.handle)).toEqual([cors7, host7, ours, sirv]);

  const unknown = entries(ours, named('renamedCors'), sirv);
  expect(placeAfterViteGuards(unknown, ours, true)).toBe(false);
  expect(unknown.map((e) => e.handle)).toEqual([unknown[0].handle, sirv]);

  const noCors = entries(ours, host, sirv);
  expect(placeAfterViteGuards(noCors, ours, false)).toBe(true);
  expect(noCors.map((e) => e.handle)).toEqual([host, ours, sirv]);
});

test('otherCompressors and frameworkOf read plugin names', () => {
  const named = (/** @type {string[]} */ ...names) => names.map((name) => ({ name }));
  expect(otherCompressors(named('vite:compression', 'vite-plugin-compression', 'gzip', 'rollup-plugin-brotli', 'precompressor', 'precompressor:hash-names', 'vite:css'))).toEqual(['vite:compression', 'vite-plugin-compression', 'gzip', 'rollup-plugin-brotli']);
  expect(frameworkOf(named('vite:css', 'vite-plugin-sveltekit-setup'))).toBe('sveltekit');
  expect(frameworkOf(named('astro:build'))).toBe('astro');
  expect(frameworkOf(named('nuxt:chunk-reload'))).toBe('nuxt');
  expect(frameworkOf(named('react-router', 'vite:css'))).toBeNull();
});
