import fs from 'node:fs/promises';
import path from 'node:path';
import { watch } from '../../lib/watch/watch.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { info } from '../../lib/compress/cache/upkeep.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// The variant cache in watch mode: a batch costs what it touches, so it never scans the cache
// folder (a stat per entry) to keep it under cacheMaxSize; the next whole pass or run evicts.
// Real file-system events: the waits are for a batch, with a deadline.

const WAIT_MS = 15000;
let tmp;
beforeEach(async () => {
  tmp = await tempDir('pc-watch-cache-');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** The first batch that compressed `rel`, or a rejection after WAIT_MS. */
function batchCompressing(w, rel) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no batch compressed ${rel} within ${WAIT_MS} ms`)), WAIT_MS);
    w.on('batch', (b) => {
      if (!b.changes.some((c) => c.path === rel && c.action === 'compress')) return;
      clearTimeout(timer);
      resolve(b);
    });
  });
}

test('a batch that takes the cache over its cap evicts nothing; the next whole pass evicts down to the cap', async () => {
  const root = path.join(tmp, 'dist');
  const cacheDir = path.join(tmp, 'cache');
  const lastRun = async () => JSON.parse(await fs.readFile(path.join(cacheDir, 'last-run.json'), 'utf8'));
  await writeTree(root, { 'a.js': textOf(20_000, 31), 'b.css': textOf(20_000, 32) });
  await precompress(root, { cacheDir });
  const before = await info(cacheDir);
  const cap = before.bytes + 100; // room for the entries there, not for another file's
  const w = watch(root, { cacheDir, cacheMaxSize: cap, concurrency: 2 });
  try {
    await w.ready;
    const batch = batchCompressing(w, 'c.js');
    await fs.writeFile(path.join(root, 'c.js'), textOf(20_000, 33));
    expect((await batch).whole).toBe(false);
  } finally {
    await w.close();
  }
  const after = await info(cacheDir);
  expect(after.entries).toBeGreaterThan(before.entries); // nothing evicted
  expect(after.bytes).toBeGreaterThan(cap);
  expect(await lastRun()).toMatchObject({ bytes: after.bytes }); // the estimate is the real size

  // A whole pass that takes nothing from the cache still evicts what the batch left over the cap.
  const r = await precompress(root, { cacheDir, cacheMaxSize: cap });
  expect(r.cache).toMatchObject({ hits: 0, misses: 0 });
  const pruned = await info(cacheDir);
  expect(pruned.bytes).toBeLessThanOrEqual(cap);
  expect(pruned.entries).toBeLessThan(after.entries);
  expect(await lastRun()).toMatchObject({ bytes: pruned.bytes, runsSinceScan: 0 });
});
