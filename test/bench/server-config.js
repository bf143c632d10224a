// Size of the generated server configurations for a big site.
//
//   npm run bench:server-config -- [--files 100000] [--unique 1000] [--hashed 100000]
//
// 1. The scale benchmark's site (test/bench/scale-tree.js: `--files` SVG icons in folders of
//    1,000 and a page), compressed by the CLI, then `precompressor config nginx|caddy`: the bytes
//    of each file written, and `nginx -t` on them when nginx is installed.
// 2. A manifest of `--hashed` hashed bundles, each with a delta (what a big app's deploy would
//    hold), through the same generators (in memory): the bytes per hashed name.

import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { makeTree } from './scale-tree.js';
import { fmtInt, timed } from './util.js';
import { siteFacts } from '../../lib/servers/site-facts.js';
import { nginxConfig } from '../../lib/servers/nginx.js';
import { caddyConfig } from '../../lib/servers/caddy.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(repoRoot, 'bin/precompressor.js');
const { values: args } = parseArgs({
  options: { files: { type: 'string', default: '100000' }, unique: { type: 'string', default: '1000' },
    hashed: { type: 'string', default: '100000' } },
});
const files = Number(args.files);
const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'precompressor-server-config-'));
try {
  const site = path.join(tmp, 'site');
  const conf = path.join(tmp, 'conf');
  console.error(`making ${fmtInt(files)} files in ${site}`);
  await makeTree(site, files, Number(args.unique));
  const run = await timed(process.execPath, [cli, site, '--quiet', '--cache-dir', path.join(tmp, 'cache'),
    '--dictionary-store', path.join(tmp, 'store')], { timeoutMs: 3 * 3600e3 });
  if (run.code !== 0) throw new Error(`the build exited ${run.code}: ${run.stderr}`);
  for (const server of ['nginx', 'caddy']) {
    const r = await timed(process.execPath, [cli, 'config', server, site, '--out', conf], { timeoutMs: 600e3 });
    if (r.code !== 0) throw new Error(`config ${server} exited ${r.code}: ${r.stderr}`);
    console.log(`${fmtInt(files)}-file site, config ${server}: ${r.wallS.toFixed(2)} s`);
  }
  let total = 0;
  for (const name of ['http.conf', 'server.conf', 'precompressor.caddy']) {
    const { size } = await fsp.stat(path.join(conf, name));
    total += name === 'precompressor.caddy' ? 0 : size;
    console.log(`  ${name}: ${fmtInt(size)} B`);
  }
  console.log(`  nginx total: ${fmtInt(total)} B`);

  const n = Number(args.hashed);
  const entries = {};
  const key = Buffer.alloc(32, 7).toString('base64');
  for (let i = 0; i < n; i++) {
    const rel = `assets/chunk-${i}-${(i * 2654435761 >>> 0).toString(36).padStart(8, 'x').slice(0, 8)}.js`;
    entries[rel] = { size: 5000, mtimeMs: 0, hash: 'sha256-x', variants: { br: { size: 1000 } },
      dictionary: { hash: key, match: `chunk-${i}-*.js`, dest: 'script', hashed: true },
      deltas: { [key]: { dcb: { size: 100, hash: 'sha256-y' } } } };
  }
  const facts = siteFacts(/** @type {any} */ ({ files: entries }), { manifestRel: 'precompressor-manifest.json' });
  const ng = nginxConfig(facts);
  const ngBytes = Buffer.byteLength(ng['http.conf']) + Buffer.byteLength(ng['server.conf']);
  const cdBytes = Buffer.byteLength(caddyConfig(facts)['precompressor.caddy']);
  console.log(`${fmtInt(n)} hashed bundles: nginx ${fmtInt(ngBytes)} B (${(ngBytes / n).toFixed(1)} B per name), ` +
    `caddy ${fmtInt(cdBytes)} B (${(cdBytes / n).toFixed(1)} B per name)`);
} finally {
  await fsp.rm(tmp, { recursive: true, force: true });
}
