import { writeServerConfigs, SERVERS } from '../servers/write.js';
import { printable } from '../util/format.js';

/**
 * `precompressor config nginx|caddy <dir> --out <folder>`: write a server's configuration of a
 * built folder, from its manifest (lib/servers/). `--server-config` on a build writes both.
 */

/** @param {import('yargs').Argv} y */
export function configBuilder(y) {
  y.positional('server', { type: 'string', choices: Object.keys(SERVERS), describe: 'The server: nginx or caddy' });
  y.positional('dir', { type: 'string', describe: 'The built folder (compressed by `precompressor <dir>`)' });
  y.option('out', { type: 'string', demandOption: true, describe: 'Folder to write the files into (outside <dir>)' });
  y.option('manifest', { type: 'string', describe: 'The manifest, if not <dir>/precompressor-manifest.json' });
  return y;
}

/**
 * @param {Record<string, any>} argv
 * @param {NodeJS.WritableStream} stdout
 * @param {NodeJS.WritableStream} stderr
 */
export async function configCommand(argv, stdout, stderr) {
  try {
    const written = await writeServerConfigs(String(argv.dir), {
      out: String(argv.out), servers: [argv.server], manifest: argv.manifest,
    });
    for (const f of written) stdout.write(`${printable(f)}\n`);
    return 0;
  } catch (err) {
    stderr.write(`precompressor: ${printable(/** @type {Error} */ (err).message)}\n`);
    return 2;
  }
}

/**
 * After a build with `serverConfig`: both servers' files, rewritten.
 * @param {string} dir
 * @param {{ serverConfig?: string | null, manifest?: string | null, dryRun?: boolean, shard?: unknown }} api
 */
export async function afterBuild(dir, api) {
  if (!api.serverConfig || api.dryRun || api.shard) return []; // a shard writes no manifest
  return writeServerConfigs(dir, { out: api.serverConfig, manifest: api.manifest ?? undefined });
}
