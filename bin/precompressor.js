#!/usr/bin/env node
// Argument parsing and printing only; the work is in lib/.
import module from 'node:module';
import os from 'node:os';

// V8's compiled code kept across runs (Node >= 22.1); quiet where its folder cannot be written. The
// pass thread and the pool's workers inherit it through the environment.
const compileCache = module.enableCompileCache?.();
if (compileCache?.directory && !process.env.NODE_COMPILE_CACHE) process.env.NODE_COMPILE_CACHE = compileCache.directory;

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === '--version') {
  // Answered before anything else loads: yargs alone costs several times an empty node.
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
  process.exit(0);
}

// zlib's async work runs on libuv's thread pool (4 threads by default). Give it one thread per
// core plus room for file I/O, before anything touches the pool.
if (!process.env.UV_THREADPOOL_SIZE) {
  process.env.UV_THREADPOOL_SIZE = String(Math.max(4, os.availableParallelism() + 2));
}

const { main } = await import('../lib/cli/cli.js');
process.exitCode = await main(args);
