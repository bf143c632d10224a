// The plain compress command (`precompressor <dir> --flag value …`) read without yargs, which costs
// several times the rest of a small run's start-up (#31). Anything else is left to yargs.
import { parseArgs } from 'node:util';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS } from './options.js';

const FLAGS = [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS];
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/** @type {import('node:util').ParseArgsConfig['options']} */
const OPTIONS = Object.fromEntries(FLAGS.map((f) => [f.flag, {
  type: f.type === 'boolean' ? 'boolean' : 'string', multiple: f.type === 'array',
}]));

/**
 * The compress command's arguments as yargs gives them to its handler, or null when yargs must read
 * them: help, a subcommand, anything it would word an error for or this reading does not cover.
 * @param {readonly string[]} args
 * @returns {Record<string, unknown> & { dir: string } | null}
 */
export function fastCompressArgv(args) {
  if (args.length === 0 || args[0] === 'serve' || args[0] === 'cache' || args[0] === 'config') return null;
  /** @type {{ positionals: string[], tokens: { kind: string, name?: string, rawName?: string, value?: string }[] }} */
  let parsed;
  try {
    const config = {
      args: [...args], options: OPTIONS, allowPositionals: true, allowNegative: true, strict: true, tokens: true,
    };
    parsed = /** @type {typeof parsed} */ (/** @type {unknown} */ (parseArgs(config)));
  } catch {
    return null; // unknown or malformed: yargs says which
  }
  if (parsed.positionals.length !== 1 || parsed.tokens.some((t) => t.kind === 'option-terminator')) return null;
  const seen = new Set();
  /** @type {Record<string, unknown> & { dir: string }} */
  const argv = { dir: parsed.positionals[0] };
  for (const t of parsed.tokens) {
    if (t.kind !== 'option') continue;
    const f = FLAGS.find((x) => x.flag === t.name);
    if (!f) return null;
    if (f.type !== 'array' && seen.has(f.flag)) return null; // yargs makes an array of it
    seen.add(f.flag);
    if (f.type === 'number') {
      if (t.value === undefined || !NUMBER.test(t.value)) return null;
      argv[f.flag] = Number(t.value);
    } else if (f.type === 'array') {
      if (t.value === undefined) return null;
      argv[f.flag] = [...(/** @type {string[] | undefined} */ (argv[f.flag]) ?? []), t.value];
    } else if (f.type === 'boolean') {
      argv[f.flag] = !t.rawName?.startsWith('--no-');
    } else {
      if (t.value === undefined) return null;
      argv[f.flag] = t.value;
    }
  }
  return argv;
}
