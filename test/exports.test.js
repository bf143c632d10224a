import fs from 'node:fs';
import * as main from '../lib/index.js';
import { OPTION_DEFAULTS } from '../lib/options.js';
import { SERVE_DEFAULTS } from '../lib/serve/http/options.js';
import { WATCH_DEFAULTS } from '../lib/watch/watch.js';
import { VITE_DEFAULTS } from '../plugins/vite.js';

const dts = fs.readFileSync(new URL('../lib/index.d.ts', import.meta.url), 'utf8');
const types = fs.readFileSync(new URL('../lib/types.d.ts', import.meta.url), 'utf8');
const block = (name) => types.slice(types.indexOf(`export interface ${name} `), types.indexOf('\n}\n', types.indexOf(`export interface ${name} `)));
const declared = (name) => [...block(name).matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]).sort();

test('the runtime exports are exactly the declared ones', () => {
  const names = [...dts.matchAll(/^export (?:function|class) (\w+)/gm)].map((m) => m[1]).sort();
  expect(Object.keys(main).sort()).toEqual(names);
});

test.each([
  ['precompressor/fetch', '../lib/fetch.d.ts', ['fetchHandler']],
  ['precompressor/fastify', '../lib/fastify.d.ts', ['default', 'precompressor']],
])('%s: the runtime exports are exactly the declared ones, types first in package.json', async (entry, dtsFile, names) => {
  const mod = await import(entry);
  const text = fs.readFileSync(new URL(dtsFile, import.meta.url), 'utf8');
  const declaredNames = [...text.matchAll(/^export (?:declare )?(?:function|const) (\w+)/gm)].map((m) => m[1]);
  if (/^export default /m.test(text)) declaredNames.push('default');
  expect(Object.keys(mod).sort()).toEqual(names);
  expect(declaredNames.sort()).toEqual(names);
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  expect(pkg.exports[`./${entry.split('/')[1]}`].types).toBe(`./lib/${entry.split('/')[1]}.d.ts`);
  if (mod.default) expect(mod.default).toBe(mod.precompressor);
});

test('the declared options are exactly the options the code accepts', () => {
  expect(declared('PrecompressOptions')).toEqual(Object.keys(OPTION_DEFAULTS).sort());
  expect(declared('ServeOptions')).toEqual(Object.keys(SERVE_DEFAULTS).sort());
  expect(declared('WatchOptions')).toEqual(Object.keys(WATCH_DEFAULTS).sort());
  expect(declared('PrecompressorViteOptions')).toEqual(Object.keys(VITE_DEFAULTS).sort());
});

test('package.json points at files that exist, types first', () => {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  for (const entry of Object.values(pkg.exports)) {
    if (typeof entry === 'string') continue;
    expect(Object.keys(entry)[0]).toBe('types');
    for (const file of Object.values(entry)) expect(fs.existsSync(new URL(`../${file}`, import.meta.url))).toBe(true);
  }
  expect(fs.existsSync(new URL(`../${pkg.bin.precompressor}`, import.meta.url))).toBe(true);
});

test('npm pack ships the LICENSE (MIT, as package.json says), the code, types and docs, and no tests', async () => {
  const { runCommand } = await import('./helpers/spawn.js');
  const root = new URL('..', import.meta.url);
  const r = await runCommand('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
  expect(r.code).toBe(0);
  const files = JSON.parse(r.stdout)[0].files.map((f) => f.path);
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  expect(pkg.license).toBe('MIT');
  expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'bin/precompressor.js', 'lib/index.js', 'lib/index.d.ts', 'plugins/vite.js', 'plugins/vite.d.ts', 'lib/cli/serve.js', 'docs/serve.md']));
  expect(new Set(files.map((f) => f.split('/')[0]))).toEqual(new Set(['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'bin', 'lib', 'plugins', 'docs']));
  const license = fs.readFileSync(new URL('../LICENSE', import.meta.url), 'utf8');
  expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 precompressor contributors\n/);
  expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
});
