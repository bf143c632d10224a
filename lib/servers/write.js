import fs from 'node:fs/promises';
import path from 'node:path';
import { PrecompressorError } from '../errors.js';
import { MANIFEST_NAME } from '../options.js';
import { readManifest } from '../manifest/manifest.js';
import { writeAtomic } from '../fs-atomic.js';
import { isInside, relInside } from '../paths.js';
import { siteFacts } from './site-facts.js';
import { nginxConfig } from './nginx.js';
import { caddyConfig } from './caddy.js';

/** The servers a configuration is generated for, and the files each one gets. */
export const SERVERS = Object.freeze({
  nginx: Object.freeze(['http.conf', 'server.conf']),
  caddy: Object.freeze(['precompressor.caddy']),
});

/**
 * The real path of `p`; a folder not made yet is judged by where it would be.
 * @param {string} p absolute
 */
async function realish(p) {
  const rest = [];
  for (let at = p; ; at = path.dirname(at)) {
    try {
      return path.join(await fs.realpath(at), ...rest.reverse());
    } catch {
      if (path.dirname(at) === at) return p;
      rest.push(path.basename(at));
    }
  }
}

/**
 * Write the configuration files of `servers` for the built folder `dir` into `out` (outside `dir`),
 * each whole (temp + rename), so that a server reloaded meanwhile reads the old file or the new one.
 * @param {string} dir
 * @param {{ out: string, servers?: readonly ('nginx' | 'caddy')[], manifest?: string }} o
 * @returns {Promise<string[]>}
 */
export async function writeServerConfigs(dir, { out, servers = ['nginx', 'caddy'], manifest }) {
  const root = path.resolve(dir);
  const target = path.resolve(out);
  const [realRoot, realOut] = await Promise.all([realish(root), realish(target)]);
  if (isInside(realRoot, realOut)) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_OPTION',
      `The server configuration folder ${target} is inside the served folder ${root}: choose one outside it`);
  }
  const manifestPath = path.resolve(root, manifest ?? MANIFEST_NAME);
  const m = await readManifest(manifestPath);
  if (m === null) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_MANIFEST',
      `${manifestPath} does not exist: run precompressor ${dir} first`, { path: manifestPath });
  }
  const manifestRel = relInside(root, manifestPath)?.split(path.sep).join('/') ?? null;
  const facts = siteFacts(m, { manifestRel });
  await fs.mkdir(target, { recursive: true });
  const written = [];
  for (const server of servers) {
    const files = server === 'nginx' ? nginxConfig(facts) : caddyConfig(facts);
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(target, name);
      await writeAtomic(file, text);
      written.push(file);
    }
  }
  return written;
}
