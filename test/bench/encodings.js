// Encodings benchmark: bytes and wall time of gzip 9, zopfli, zstd 19 and Brotli 11, each written
// by our precompress() alone (one encoding per run) on fresh copies of the same corpora as the
// core benchmark (test/bench/corpus.js).
//
//   node test/bench/encodings.js [--only mixed|small] [--keep DIR]
//
// Prints a Markdown table per corpus. Bytes are the sum of the variants the manifest lists
// (files where the encoding did not make the file smaller keep no variant).

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildCorpus } from './corpus.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { nodeHasZstd } from '../../lib/compress/encoders/zstd.js';

const { values: args } = parseArgs({ options: { only: { type: 'string' }, keep: { type: 'string' } } });

const CONTENDERS = [
  { name: 'gzip -9 (zlib)', encoding: 'gzip', options: { encodings: ['gzip'], gzipLevel: 9 } },
  { name: 'zopfli (15 iterations)', encoding: 'gzip', options: { encodings: ['gzip'], zopfli: true } },
  { name: `zstd 19 (${nodeHasZstd ? 'Node zlib' : 'WebAssembly'}, window ≤ 8 MB)`, encoding: 'zstd', options: { encodings: ['zstd'], zstdLevel: 19 } },
  { name: 'Brotli 11', encoding: 'br', options: { encodings: ['br'], brotliQuality: 11 } },
];

const mb = (n) => (n / 1e6).toFixed(2);

async function benchCorpus(kind, work) {
  const source = path.join(work, `corpus-${kind}`);
  await buildCorpus(kind, source);
  const rows = [];
  let compressible = 0;
  let files = 0;
  for (const c of CONTENDERS) {
    const dir = path.join(work, `run-${kind}`);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.cp(source, dir, { recursive: true });
    const report = await precompress(dir, c.options);
    if (!report.ok) throw new Error(`${c.name} on ${kind}: ${report.failures.map((f) => `${f.path}: ${f.message}`).join('; ')}`);
    const bytes = report.bytes[c.encoding] ?? 0;
    compressible = Math.max(compressible, report.bytes.compressible);
    files = report.files.scanned;
    rows.push({ name: c.name, bytes, seconds: report.durationMs / 1000 });
    process.stderr.write(`${kind}: ${c.name} done in ${(report.durationMs / 1000).toFixed(1)} s\n`);
    await fs.rm(dir, { recursive: true, force: true });
  }
  const gzip9 = rows[0].bytes;
  const lines = [
    `### ${kind}: ${files} files, ${mb(compressible)} MB compressible`,
    '',
    '| encoder | output MB | % of compressible | vs gzip -9 | wall time (s) |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${mb(r.bytes)} | ${((r.bytes / compressible) * 100).toFixed(2)} % | ${(((r.bytes - gzip9) / gzip9) * 100).toFixed(2)} % | ${r.seconds.toFixed(1)} |`),
  ];
  return lines.join('\n');
}

const work = args.keep ?? await fs.mkdtemp(path.join(os.tmpdir(), 'precompressor-bench-enc-'));
try {
  const kinds = args.only ? [args.only] : ['mixed', 'small'];
  const out = [`Node ${process.version}, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}); concurrency = cores.`, ''];
  for (const kind of kinds) out.push(await benchCorpus(kind, work), '');
  process.stdout.write(out.join('\n'));
} finally {
  if (!args.keep) await fs.rm(work, { recursive: true, force: true });
}
