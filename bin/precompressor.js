#!/usr/bin/env node
// Argument parsing and printing only; the work is in lib/.
import os from 'node:os';

// zlib's async work runs on libuv's thread pool (4 threads by default). Give it one thread per
// core plus room for file I/O, before anything touches the pool.
if (!process.env.UV_THREADPOOL_SIZE) {
  process.env.UV_THREADPOOL_SIZE = String(Math.max(4, os.availableParallelism() + 2));
}

// The pass's thread starts (and loads the compressor) on another core while this one loads the
// argument parser.
const { asksForCompression, startPassThread } = await import('../lib/cli/compress-thread.js');
if (asksForCompression(process.argv.slice(2))) startPassThread();
const { main } = await import('../lib/cli/cli.js');
process.exitCode = await main(process.argv.slice(2));
