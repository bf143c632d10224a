import fs from 'node:fs';
import { SERVE_DEFAULTS, PREVIEW_LIMITS } from '../serve/index.js';
import { commaList } from '../options.js';
import { statIfThere } from '../fs-atomic.js';
import { withFlagNames } from './options.js';
import { printable } from '../util/format.js';
import { PREVIEW_EXTENSIONS } from '../site-policy.js';

/**
 * `precompressor serve <dir>`: preview a compressed folder with serveStatic on node:http. `--help` and
 * docs/serve.md's table of flags come from SERVE_FLAGS (`npm run docs:options`).
 */

/** Default port of `precompressor serve`: a fixed one, so the URL survives restarts (0 = any free port). */
export const SERVE_DEFAULT_PORT = 8080;

/**
 * @typedef {{ flag: string, option: string | null, type: 'number' | 'string' | 'boolean',
 *   default: string | number | boolean, describe: string, choices?: readonly string[] }} ServeFlag
 */

/** @type {readonly ServeFlag[]} */
export const SERVE_FLAGS = Object.freeze([
  { flag: 'port', option: null, type: 'number', default: SERVE_DEFAULT_PORT,
    describe: 'Port to listen on (0 picks a free one); -p; $PORT when not given' },
  { flag: 'host', option: null, type: 'string', default: '127.0.0.1',
    describe: 'Interface to listen on (0.0.0.0 or :: for every interface)' },
  { flag: 'extensions', option: 'extensions', type: 'string', default: PREVIEW_EXTENSIONS.join(','),
    describe: 'Comma-separated extensions tried for a path without one, ' +
      'as framework previews do (/about → about.html); "" for none' },
  { flag: 'extensions-first', option: 'extensionsFirst', type: 'boolean', default: true,
    describe: 'Try the extensions before a folder\'s redirect (/about → about.html beside about/), ' +
      'as static hosts do; --no-extensions-first for express.static\'s order' },
  { flag: 'spa', option: 'spa', type: 'boolean', default: SERVE_DEFAULTS.spa,
    describe: 'Answer navigations (Accept: text/html) to paths that are not files with index.html, ' +
      'for client-side routing' },
  { flag: 'unlisted', option: 'unlisted', type: 'boolean', default: SERVE_DEFAULTS.unlisted,
    describe: 'Also serve files the manifest does not list (uncompressed); serve without a manifest' },
  { flag: 'max-age', option: 'maxAge', type: 'string', default: String(SERVE_DEFAULTS.maxAge),
    describe: 'Cache-Control max-age: milliseconds or a duration such as 1h, 1d, 1y' },
  { flag: 'immutable', option: 'immutable', type: 'boolean', default: SERVE_DEFAULTS.immutable,
    describe: 'Add immutable to Cache-Control' },
  { flag: 'encodings', option: 'encodings', type: 'string', default: SERVE_DEFAULTS.encodings.join(','),
    describe: 'Comma-separated encodings to serve, in order of preference' },
  { flag: 'dotfiles', option: 'dotfiles', type: 'string', default: SERVE_DEFAULTS.dotfiles,
    choices: ['ignore', 'deny', 'allow'],
    describe: 'Files and folders whose name starts with a dot: ignore (404), deny (403) or allow' },
  { flag: 'manifest', option: 'manifest', type: 'string', default: '<dir>/precompressor-manifest.json',
    describe: 'The manifest to serve from; a relative path is resolved against `<dir>`, ' +
      'as for `precompressor <dir> --manifest`' },
  { flag: 'max-manifest-bytes', option: 'maxManifestBytes', type: 'number', default: SERVE_DEFAULTS.maxManifestBytes,
    describe: 'Refuse a larger manifest (and any manifest that is not a regular file)' },
  { flag: 'timeout', option: 'timeout', type: 'string', default: seconds(PREVIEW_LIMITS.timeout),
    describe: 'Close a connection with no progress for this long, ' +
      'a download its client stopped reading included (0: never)' },
  { flag: 'headers-timeout', option: 'headersTimeout', type: 'string', default: seconds(PREVIEW_LIMITS.headersTimeout),
    describe: 'Close a connection whose request head has not arrived within this' },
  { flag: 'request-timeout', option: 'requestTimeout', type: 'string', default: seconds(PREVIEW_LIMITS.requestTimeout),
    describe: 'Close a connection whose whole request has not arrived within this' },
  { flag: 'keep-alive-timeout', option: 'keepAliveTimeout', type: 'string',
    default: seconds(PREVIEW_LIMITS.keepAliveTimeout),
    describe: 'Close an idle kept-alive connection after this' },
  { flag: 'max-connections', option: 'maxConnections', type: 'number', default: PREVIEW_LIMITS.maxConnections,
    describe: 'Connections open at once; at the cap a new one closes the one idle longest ' +
      '(or itself, when every other one is answering a request)' },
]);

/** A duration's flag default as the user would type it: `30s`. @param {number} ms */
function seconds(ms) {
  return `${ms / 1000}s`;
}

/** @param {import('yargs').Argv} y */
export function serveBuilder(y) {
  y.positional('dir', { type: 'string', describe: 'Folder to serve (compressed by `precompressor <dir>`)' });
  for (const f of SERVE_FLAGS) {
    // --port is parsed here (as a string), so that its error can show what was typed.
    const type = f.type === 'number' ? 'string' : f.type;
    y.option(f.flag, {
      type, describe: `${f.describe} [default: ${f.default}]`,
      ...(f.choices ? { choices: f.choices } : {}), ...(f.flag === 'port' ? { alias: 'p' } : {}),
    });
  }
  return y.check((argv) => {
    if (argv.port !== undefined && parsePort(argv.port) === null) {
      throw new Error(`Expected --port to be an integer from 0 to 65535, got ${JSON.stringify(argv.port)}`);
    }
    return true;
  });
}

/**
 * The port from its flag's text, or null when it is not an integer from 0 to 65535 (pure).
 * @param {unknown} text
 */
export function parsePort(text) {
  if (!/^\d{1,5}$/.test(String(text))) return null;
  const port = Number(text);
  return port <= 65535 ? port : null;
}

/**
 * serveStatic options from parsed arguments: only flags given, so that the defaults stay serveStatic's (pure).
 * @param {Record<string, unknown>} argv
 */
function serveOptionsFromArgv(argv) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const f of SERVE_FLAGS) {
    const v = argv[f.flag];
    if (v === undefined || f.option === null) continue;
    if (f.option === 'encodings' || f.option === 'extensions') out[f.option] = commaList(v);
    // a number flag arrives as text (its error shows what was typed): a number when it is one
    else out[f.option] = f.type === 'number' && /^\d+$/.test(String(v)) ? Number(v) : v;
  }
  // A preview's default, not serveStatic's (express.static's `false`): /about finds about.html.
  out.extensions ??= [...PREVIEW_EXTENSIONS];
  out.extensionsFirst ??= true;
  return out;
}

/**
 * An error from serveStatic worded for the command line: `--max-age`, not `options.maxAge` (pure).
 * @param {Error & { code?: string, path?: string }} err
 * @param {string} dir
 * @param {boolean} missingManifest
 */
function cliMessage(err, dir, missingManifest) {
  if (err.code === 'ERR_PRECOMPRESSOR_MANIFEST' && missingManifest) {
    return `No manifest at ${err.path}: run "precompressor ${dir}" first, pass --manifest with its path, ` +
      'or --unlisted to serve the files without one';
  }
  if (err.code === 'EADDRINUSE') return `${err.message}: pass another --port, or --port 0 for a free one`;
  return withFlagNames(err.message, SERVE_FLAGS);
}

/**
 * Run the preview until SIGINT/SIGTERM; the exit code is 0 after a signal, 2 when it cannot start.
 * @param {Record<string, unknown>} argv
 * @param {NodeJS.WritableStream} stdout
 * @param {NodeJS.WritableStream} stderr
 */
export async function serveCommand(argv, stdout, stderr) {
  const dir = String(argv.dir);
  if (!statIfThere(dir)?.isDirectory()) {
    stderr.write(`precompressor: no folder at ${printable(dir)}\n`);
    return 2;
  }
  const { startPreview } = await import('../serve/index.js');
  const options = serveOptionsFromArgv(argv);
  let preview;
  const envPort = argv.port === undefined ? process.env.PORT : undefined;
  if (envPort !== undefined && envPort !== '' && parsePort(envPort) === null) {
    stderr.write(`precompressor: Expected $PORT to be an integer from 0 to 65535, got ${JSON.stringify(envPort)}\n`);
    return 2;
  }
  try {
    const given = argv.port ?? (envPort === '' ? undefined : envPort);
    const port = given === undefined ? SERVE_DEFAULT_PORT : /** @type {number} */ (parsePort(given));
    preview = await startPreview({ root: dir, port, host: String(argv.host ?? '127.0.0.1'), ...options });
  } catch (err) {
    const e = /** @type {Error & { code?: string, path?: string }} */ (err);
    const missing = e.code === 'ERR_PRECOMPRESSOR_MANIFEST' && !!e.path && !fs.existsSync(e.path);
    stderr.write(`precompressor: ${printable(cliMessage(e, dir, missing))}\n`);
    return 2;
  }
  const { urls } = preview;
  if (urls.length === 1) stdout.write(`Serving ${printable(dir)} at ${urls[0]}\n`);
  else stdout.write(`Serving ${printable(dir)} at\n${urls.map((u) => `  ${u}\n`).join('')}`);
  stdout.write('Press Ctrl+C to stop\n');
  await new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await preview.close();
  return 0;
}
