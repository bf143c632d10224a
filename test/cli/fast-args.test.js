import yargs from 'yargs';
import { fastCompressArgv } from '../../lib/cli/fast-args.js';
import { compressBuilder } from '../../lib/cli/cli.js';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS } from '../../lib/cli/options.js';

// The compress command read without yargs must give its handler what yargs gives it.
const FLAGS = [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS].map((f) => f.flag);

/** What yargs hands the `$0 <dir>` handler, kept to the keys the CLI reads. */
async function viaYargs(args) {
  let got = null;
  await yargs(args).command('$0 <dir>', false, compressBuilder, (argv) => { got = argv; })
    .strict().exitProcess(false).fail((msg, err) => { throw err ?? new Error(msg); }).parseAsync();
  return Object.fromEntries(Object.entries(got).filter(([k, v]) => (k === 'dir' || FLAGS.includes(k)) && v !== undefined));
}

const SAME = [
  ['dist'],
  ['dist', '--quiet'],
  ['--json', 'dist'],
  ['dist', '--brotli-quality', '5', '--gzip-level=6', '--min-ratio', '0.95'],
  ['dist', '--no-cache', '--no-deltas', '--no-site-dictionary'],
  ['dist', '--include', '**/*.js', '--include', '**/*.css', '--exclude', '**/*.map'],
  ['dist', '--encodings', 'br,zstd', '--zstd', '--zopfli', '--dry-run'],
  ['dist', '--manifest', 'out/m.json', '--cache-dir', '/tmp/c', '--cache-max-size', '1GiB', '--force'],
  ['dist', '--hash-pattern', '\\.(?<hash>[a-z0-9]{8})\\.', '--dotfiles', '--watch'],
  ['dist', '--hash-pattern=-(?<hash>[a-z0-9]{8})\\.'],
  ['./build dir with spaces', '--concurrency', '3', '--delta-margin', '0.2', '--dictionary-versions', '5'],
];

test.each(SAME.map((a) => [a]))('%j reads as yargs reads it', async (args) => {
  const fast = fastCompressArgv(args);
  expect(fast).not.toBeNull();
  expect(fast).toEqual(await viaYargs(args));
});

// Left to yargs: it words the errors, the help, the subcommands and its own extensions.
test.each([
  [[]], [['--help']], [['dist', '--help']], [['serve', 'dist']], [['cache', 'info']], [['--version']],
  [['dist', '--unknown']], [['dist', 'extra']], [['dist', '-q']], [['dist', '--brotliQuality', '5']],
  [['dist', '--brotli-quality', 'high']], [['dist', '--brotli-quality', '0x10']], [['dist', '--concurrency', '-1']],
  [['dist', '--manifest', 'a', '--manifest', 'b']], [['dist', '--quiet=false']], [['dist', '--', 'x']],
  [['dist', '--no-include']], [['dist', '--manifest']], [['dist', '--hash-pattern', '-(?<hash>[a-z0-9]{8})']],
])('%j is left to yargs', (args) => {
  expect(fastCompressArgv(args)).toBeNull();
});
