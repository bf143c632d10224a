import fs from 'node:fs';
import * as main from '../lib/index.js';
import { OPTION_DEFAULTS } from '../lib/options.js';
import { SERVE_DEFAULTS } from '../lib/serve/options.js';
import { WATCH_DEFAULTS } from '../lib/watch/watch.js';

const dts = fs.readFileSync(new URL('../lib/index.d.ts', import.meta.url), 'utf8');
const block = (name) => dts.slice(dts.indexOf(`export interface ${name} `), dts.indexOf('\n}\n', dts.indexOf(`export interface ${name} `)));
const declared = (name) => [...block(name).matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]).sort();

test('the runtime exports are exactly the declared ones', () => {
  const names = [...dts.matchAll(/^export (?:function|class) (\w+)/gm)].map((m) => m[1]).sort();
  expect(Object.keys(main).sort()).toEqual(names);
});

test('the declared options are exactly the options the code accepts', () => {
  expect(declared('PrecompressOptions')).toEqual(Object.keys(OPTION_DEFAULTS).sort());
  expect(declared('ServeOptions')).toEqual(Object.keys(SERVE_DEFAULTS).sort());
  expect(declared('WatchOptions')).toEqual(Object.keys(WATCH_DEFAULTS).sort());
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
