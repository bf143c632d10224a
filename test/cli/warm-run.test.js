import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../helpers/spawn.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { fewEntries } from '../../lib/cli/compress-thread.js';

// A warm re-run of the command line on a large tree (#31): answered from the warm index and the
// folder's stat data, on the main thread, without reading a file's content.

const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const counter = new URL('../helpers/count-threads.js', import.meta.url).href;
const INDEX = 'precompressor-manifest.json.pcindex';

/** A CLI run with its report and the number of threads it started. */
async function run(root) {
  const r = await runCommand(process.execPath, ['--import', counter, bin, root, '--json', '--no-cache']);
  expect(r.code).toBe(0);
  const threads = Number(/threads started: (\d+)/.exec(r.stderr)?.[1]);
  const report = JSON.parse(r.stdout);
  delete report.durationMs;
  return { threads, report };
}

test('a warm run of a large tree starts no thread, reads no content, and reports as the whole pass', async () => {
  const root = await tempDir();
  try {
    const at = new Date('2026-01-02T03:04:05Z');
    await writeTree(root, { 'a.js': textOf(20_000), 'page.html': textOf(3000, 3), 'sub/b.css': textOf(4000, 2) });
    await fs.utimes(path.join(root, 'a.js'), at, at);
    // empty folders make the tree large (the CLI's pass thread) at no compression cost
    for (let i = 0; i < 5000; i++) await fs.mkdir(path.join(root, `d${i}`));
    expect(fewEntries(root)).toBe(false);

    const cold = await run(root);
    expect(cold.report.files).toMatchObject({ compressed: 3 });
    expect(cold.threads).toBeGreaterThan(0);
    const manifest = await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8');
    expect(JSON.parse(manifest).files[INDEX]).toBeUndefined();
    await fs.access(path.join(root, INDEX));

    // same size and mtime, other bytes: a run that trusts the stat data does not see it
    await fs.writeFile(path.join(root, 'a.js'), textOf(20_000, 9));
    await fs.utimes(path.join(root, 'a.js'), at, at);
    const warm = await run(root);
    expect(warm.threads).toBe(0);
    expect(warm.report.files).toMatchObject({ scanned: 3, unchanged: 3, compressed: 0 });
    expect(warm.report.changes).toEqual([]);
    const br = await fs.readFile(path.join(root, 'a.js.br'));
    expect(zlib.brotliDecompressSync(br).toString()).toBe(textOf(20_000));
    expect(await fs.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8')).toBe(manifest);

    // without the index, the whole pass on its thread: the same report, and the index made again
    await fs.rm(path.join(root, INDEX));
    const whole = await run(root);
    expect(whole.threads).toBeGreaterThan(0);
    expect(whole.report).toEqual(warm.report);
    await fs.access(path.join(root, INDEX));
    expect((await run(root)).threads).toBe(0);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
