// Real builds of the frameworks' smallest apps, set up from files the test writes (no scaffolder):
// each app gets a node_modules of its own made of links to this repository's packages, so the
// caches land in the app's node_modules/.cache as in a real project.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir, writeTree } from './tmp.js';
import { runCommand } from './spawn.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MODULES = path.join(REPO, 'node_modules');
export const BIN = path.join(REPO, 'bin/precompressor.js');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Does `version` (x.y.z) satisfy an npm `engines` range made of `>=`, `^`, spaces and `||`? */
export function satisfies(version, range) {
  const v = version.replace(/^v/, '').split('.').map(Number);
  const cmp = (a) => v[0] - a[0] || v[1] - a[1] || v[2] - a[2];
  return range.split('||').some((alt) => alt.trim().split(/\s+/).every((c) => {
    const m = /^(>=|\^|>|<=|<)?v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(c);
    if (!m) return true;
    const a = [Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 0)];
    if (m[1] === '^') return v[0] === a[0] && cmp(a) >= 0;
    if (m[1] === '>') return cmp(a) > 0;
    if (m[1] === '<') return cmp(a) < 0;
    if (m[1] === '<=') return cmp(a) <= 0;
    return m[1] === '>=' ? cmp(a) >= 0 : cmp(a) === 0;
  }));
}

/**
 * Why a framework cannot run on this Node (its installed packages' `engines`), or null. Detected
 * at run time: CI runs Node 22.12, which some frameworks no longer support.
 * @param {string[]} packages
 */
export function unsupported(packages) {
  for (const name of packages) {
    const file = path.join(MODULES, name, 'package.json');
    if (!fs.existsSync(file)) return `${name} is not installed`;
    const range = JSON.parse(fs.readFileSync(file, 'utf8')).engines?.node;
    if (range && !satisfies(process.version, range)) return `${name} needs Node ${range}, this is ${process.version}`;
  }
  return null;
}

/** The one Node major that runs the heaviest real builds (Next.js, Docusaurus): CI runs four Nodes in 90 minutes. */
export const HEAVY_BUILD_NODE = 24;

/**
 * Why the heaviest builds do not run on this Node, or null (also null with PRECOMPRESSOR_HEAVY_BUILDS=1).
 * @param {string[]} packages the framework's packages, checked as unsupported() does
 */
export function heavyBuildSkip(packages) {
  const major = Number(process.versions.node.split('.')[0]);
  if (major !== HEAVY_BUILD_NODE && process.env.PRECOMPRESSOR_HEAVY_BUILDS !== '1') {
    return `heavy real builds run on Node ${HEAVY_BUILD_NODE} only (CI runs four Nodes within 90 minutes), this is ${process.version}; PRECOMPRESSOR_HEAVY_BUILDS=1 runs them here`;
  }
  return unsupported(packages);
}

/**
 * A fresh app folder with `files` and a node_modules of links; the packages nested under each
 * of `nestedOf` are linked at the top (as npm would install them in an app without our
 * dev dependencies), so its server build resolves the versions it was made for.
 * @param {string} name
 * @param {Record<string, string>} files
 * @param {string[]} [nestedOf]
 */
export async function makeApp(name, files, nestedOf = []) {
  const root = await tempDir(`pc-${name}-`);
  await writeTree(root, { 'package.json': JSON.stringify({ name, private: true, type: 'module' }), ...files }); // files may give their own
  const nm = path.join(root, 'node_modules');
  await fsp.mkdir(nm);
  for (const entry of await fsp.readdir(MODULES)) {
    if (entry !== '.cache') await fsp.symlink(path.join(MODULES, entry), path.join(nm, entry));
  }
  await fsp.symlink(REPO, path.join(nm, 'precompressor')); // as installed: through its package.json exports
  for (const pkg of nestedOf) {
    const nested = path.join(MODULES, pkg, 'node_modules');
    if (!fs.existsSync(nested)) continue;
    for (const entry of await fsp.readdir(nested)) {
      if (entry.startsWith('.')) continue;
      if (entry.startsWith('@')) await linkScope(path.join(nested, entry), path.join(nm, entry));
      else {
        await fsp.rm(path.join(nm, entry), { force: true });
        await fsp.symlink(path.join(nested, entry), path.join(nm, entry));
      }
    }
  }
  return root;
}

/** A scope folder (`@angular`) made of links to the top's packages, with those of `from` on top. */
async function linkScope(from, scope) {
  const top = path.join(MODULES, path.basename(scope));
  await fsp.rm(scope, { force: true });
  await fsp.mkdir(scope, { recursive: true });
  for (const dir of [top, from]) {
    if (!fs.existsSync(dir)) continue;
    for (const entry of await fsp.readdir(dir)) {
      await fsp.rm(path.join(scope, entry), { force: true });
      await fsp.symlink(path.join(dir, entry), path.join(scope, entry));
    }
  }
}

/**
 * The environment of a project: its caches in its own node_modules/.cache (no test CACHE_DIR),
 * and not jest's (NODE_ENV=test silences Nuxt's logger); the frameworks' telemetry off.
 */
export function projectEnv() {
  const env = { ...process.env, ASTRO_TELEMETRY_DISABLED: '1', NUXT_TELEMETRY_DISABLED: '1', NEXT_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' }; // no network in CI
  for (const k of ['CACHE_DIR', 'NODE_ENV', 'JEST_WORKER_ID']) delete env[k];
  return env;
}

/**
 * Run a package's bin script in the app (`vite/bin/vite.js`, `astro/bin/astro.mjs`); throws with
 * its output when it fails. Resolves with stdout + stderr and the time taken.
 * @param {string} root
 * @param {string} script path below node_modules
 * @param {string[]} args
 */
export async function runIn(root, script, args) {
  const started = performance.now();
  const r = await runCommand(process.execPath, [path.join(MODULES, script), ...args], { cwd: root, env: projectEnv() });
  const output = r.stdout + r.stderr;
  if (r.code !== 0) throw new Error(`${script} ${args.join(' ')} exited ${r.code}:\n${output}`);
  return { output, ms: performance.now() - started };
}

/**
 * Start `node ...args` in `cwd`; resolves once `ready(output)` returns its origin, with what it
 * printed and stop() (SIGTERM, resolves at its exit).
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv }} opts
 * @param {(out: string) => string | null | undefined} ready
 * @returns {Promise<{ origin: string, output: () => string, stop: () => Promise<unknown> }>}
 */
export function startProcess(args, opts, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: projectEnv(), ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const exited = new Promise((r) => child.once('close', r));
    const onData = (d) => {
      out += d;
      const origin = ready(out);
      if (origin) resolve({ origin, output: () => out, stop: () => (child.kill('SIGTERM'), exited) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('close', (code) => reject(new Error(`node ${args.join(' ')} exited ${code}:\n${out}`)));
  });
}

/** The first http://127.0.0.1:port in `out`. */
export const originIn = (out) => /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];

/**
 * Start `precompressor serve <dir> ...args` on a free port.
 * @param {string} dir
 * @param {string[]} [args]
 */
export function startServe(dir, args = []) {
  return startProcess([BIN, 'serve', dir, '--port', '0', '--host', '127.0.0.1', ...args], {}, (out) => (out.includes('Press Ctrl+C') ? originIn(out) : null));
}

/**
 * GET `url` with `headers`; the status, headers and body as received (not decoded).
 * @param {string} url
 * @param {Record<string, string>} [headers]
 * @returns {Promise<{ status: number, headers: http.IncomingHttpHeaders, body: Buffer }>}
 */
export function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: /** @type {number} */ (res.statusCode), headers: res.headers, body: Buffer.concat(chunks) }));
    }).once('error', reject);
  });
}

/** A folder's manifest. */
export function manifestOf(dir) {
  return JSON.parse(fs.readFileSync(path.join(dir, 'precompressor-manifest.json'), 'utf8'));
}

/**
 * How the bundles (JS, CSS) of a build that changed since the build before were paired with their earlier
 * version: `changed` the files with a family whose name is new while their family was in the
 * earlier build; `paired` those with a delta tried against that version; `withDelta` those
 * with a delta file kept; `unnamed` new files named only by a hash, `byContent` those of them with a
 * delta (paired with an earlier file by content).
 * @param {any} before manifest of the earlier build
 * @param {any} after manifest of the later build
 */
export function pairing(before, after) {
  const familyOf = (rel, e) => `${rel.slice(0, rel.lastIndexOf('/') + 1)}${e.dictionary.match}`;
  const earlier = new Map();
  // a name that is only a hash (match `*.js`): paired by content, counted apart
  const named = (e) => e.dictionary && !e.dictionary.match.startsWith('*');
  for (const [rel, e] of Object.entries(before.files)) if (named(e)) earlier.set(familyOf(rel, e), e.dictionary.hash);
  const out = { changed: /** @type {string[]} */ ([]), paired: /** @type {string[]} */ ([]), withDelta: /** @type {string[]} */ ([]), unnamed: /** @type {string[]} */ ([]),
    byContent: /** @type {string[]} */ ([]) };
  for (const [rel, e] of /** @type {[string, any][]} */ (Object.entries(after.files))) {
    if (Object.hasOwn(before.files, rel) || !/\.(m?js|css)$/.test(rel)) continue;
    if (!named(e)) {
      out.unnamed.push(rel);
      if (e.deltas) out.byContent.push(rel);
      continue;
    }
    const old = earlier.get(familyOf(rel, e));
    if (old === undefined || old === e.dictionary.hash) continue;
    out.changed.push(rel);
    if (e.deltas && Object.hasOwn(e.deltas, old)) out.paired.push(rel);
    if (Object.values(e.deltas?.[old] ?? {}).length > 0) out.withDelta.push(rel);
  }
  return out;
}

/**
 * Load `url` in headless Chromium, click `selector` and wait until its text is `after` (the page
 * hydrated and runs). Resolves with the page's text, its errors and the content-encoding of each
 * script response; null when Chromium is absent.
 * @param {string} url
 * @param {string} selector
 * @param {string} after
 */
export async function clickInChromium(url, selector, after) {
  if (!fs.existsSync(CHROMIUM)) return null;
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const page = await browser.newPage();
    /** @type {(string | undefined)[]} */
    const scripts = [];
    page.on('response', (r) => void (r.url().endsWith('.js') && scripts.push(r.headers()['content-encoding'])));
    /** @type {string[]} */
    const errors = [];
    page.on('pageerror', (e) => void errors.push(/** @type {Error} */ (e).message));
    await page.goto(url, { waitUntil: 'networkidle0' });
    await page.click(selector);
    await page.waitForFunction((sel, text) => globalThis.document.querySelector(sel)?.textContent === text, {}, selector, after);
    const text = await page.evaluate(() => globalThis.document.body.innerText);
    return { text, errors, scripts };
  } finally {
    await browser.close();
  }
}

/**
 * The checks every framework's deployed folder passes when served: `/` and a bundle as br (the
 * bundle byte for byte our variant), the manifest a 404.
 * @param {string} origin
 * @param {string} dir the folder served
 * @param {string} bundle a bundle's path in it
 */
export async function expectServed(origin, dir, bundle) {
  const home = await get(`${origin}/`, { 'accept-encoding': 'br' });
  const asset = await get(`${origin}/${bundle}`, { 'accept-encoding': 'gzip, deflate, br' });
  const manifest = await get(`${origin}/precompressor-manifest.json`);
  return {
    home: { status: home.status, encoding: home.headers['content-encoding'] },
    asset: { encoding: asset.headers['content-encoding'], ours: asset.body.equals(fs.readFileSync(path.join(dir, `${bundle}.br`))) },
    manifest: manifest.status,
  };
}

/**
 * In Chromium (when present): `/` renders `text`, a click on `selector` runs (hydrated), no page
 * error, and every script arrived as br.
 * @param {string} origin
 * @param {string} selector
 * @param {string} text
 */
export async function expectHydratesWithBr(origin, selector, text) {
  const page = await clickInChromium(`${origin}/`, selector, 'clicked 1');
  if (!page) return;
  expect(page.text).toContain(text);
  expect(page.errors).toEqual([]);
  expect(page.scripts.length).toBeGreaterThan(0);
  expect(page.scripts.filter((e) => e !== 'br')).toEqual([]);
}

/**
 * Every bundle of the second build whose family was in the first and that changed is paired with
 * its first version (a delta tried against it); logs the figures for the report.
 * @param {string} label
 * @param {any} before the first build's manifest
 * @param {any} after the second's
 * @param {number[]} ms the two build times
 */
export function expectAllPaired(label, before, after, ms) {
  const p = pairing(before, after);
  console.log(`${label}: builds ${ms.map((t) => `${Math.round(t)} ms`).join(', ')}; changed with a family ${p.changed.length}, paired ${p.paired.length}, ` +
    `with a delta ${p.withDelta.length}; new files named only by a hash ${p.unnamed.length}, ` +
    `with a delta by content ${p.byContent.length}`);
  expect(p.changed.length).toBeGreaterThan(0);
  expect(p.paired).toEqual(p.changed);
  return p;
}

/** A free TCP port on 127.0.0.1 (for servers that take PORT, not 0). @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}
