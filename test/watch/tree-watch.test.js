import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { TreeWatcher } from '../../lib/watch/events/tree-watch.js';

// Watch mode's native events: one watcher per folder, never one per file (a site of 10^5 files
// with its variants would need more inotify watches than a user may have).

let dir;
let w;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-tree-watch-'));
});
afterEach(async () => {
  await w?.close();
  await fsp.rm(dir, { recursive: true, force: true });
});

/** The next `all` event on `abs` whose kind is `event` (or one of them, `a|b`). */
function next(event, abs) {
  const kinds = event.split('|');
  return new Promise((resolve) => {
    const on = (/** @type {string} */ e, /** @type {string} */ p) => {
      if (kinds.includes(e) && p === abs) {
        w.off('all', on);
        resolve(undefined);
      }
    };
    w.on('all', on);
  });
}

/** inotify watch descriptors this process holds (Linux), or null where that cannot be read. */
function inotifyWatches() {
  try {
    let n = 0;
    for (const fd of fs.readdirSync('/proc/self/fd')) {
      if (!fs.readlinkSync(`/proc/self/fd/${fd}`).includes('inotify')) continue;
      n += fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    }
    return n;
  } catch {
    return null;
  }
}

test('add, change, unlink, a new folder and its files, unlinkDir; ignored paths are neither reported nor entered', async () => {
  await fsp.mkdir(path.join(dir, 'a'));
  await fsp.mkdir(path.join(dir, 'skip'));
  await fsp.writeFile(path.join(dir, 'a', 'one.txt'), '1');
  w = new TreeWatcher(dir, (abs) => path.basename(abs) === 'skip' || abs.endsWith('.tmp'));
  const seen = [];
  w.on('all', (e, p) => seen.push(`${e} ${path.relative(dir, p)}`));
  await once(w, 'ready');
  const two = path.join(dir, 'a', 'two.txt');
  let ev = next('add', two);
  await fsp.writeFile(two, '2');
  await ev;
  ev = next('change', two);
  await fsp.appendFile(two, '22');
  await ev;
  ev = next('unlink', path.join(dir, 'a', 'one.txt'));
  await fsp.rm(path.join(dir, 'a', 'one.txt'));
  await ev;
  const deep = path.join(dir, 'b', 'c', 'deep.txt');
  // the new folders are watched once their own events arrive: the file is reported either by the
  // scan of its new folder (add) or, when the folder was watched before the writes, as add/change
  ev = next('add|change', deep);
  await fsp.mkdir(path.dirname(deep), { recursive: true });
  await fsp.writeFile(deep, 'x');
  await fsp.appendFile(deep, 'y');
  await ev;
  ev = next('unlinkDir', path.join(dir, 'b'));
  await fsp.rm(path.join(dir, 'b'), { recursive: true });
  await ev;
  await fsp.writeFile(path.join(dir, 'skip', 'x.txt'), 'no');
  const last = path.join(dir, 'a', 'last.txt');
  ev = next('add', last);
  await fsp.writeFile(path.join(dir, 'a', 'x.tmp'), 'no');
  await fsp.writeFile(last, 'z');
  await ev;
  expect(seen.filter((s) => s.includes('skip') || s.includes('.tmp'))).toEqual([]);
  expect(seen).toContain('add a/two.txt');
  expect(seen).toContain('unlink a/one.txt');
});

test('a folder replaced by a file: unlinkDir for the folder, then the file', async () => {
  await fsp.mkdir(path.join(dir, 'a'));
  await fsp.writeFile(path.join(dir, 'a', 'one.txt'), '1');
  w = new TreeWatcher(dir, () => false);
  const seen = [];
  w.on('all', (e, p) => seen.push(`${e} ${path.relative(dir, p)}`));
  await once(w, 'ready');
  const ev = next('add', path.join(dir, 'a'));
  await fsp.writeFile(path.join(dir, 'b'), 'file');
  await fsp.rm(path.join(dir, 'a'), { recursive: true });
  await fsp.rename(path.join(dir, 'b'), path.join(dir, 'a'));
  await ev;
  expect(seen).toContain('unlinkDir a');
  expect(seen.indexOf('unlinkDir a')).toBeLessThan(seen.indexOf('add a'));
});

test('one watch per folder, not per file', async () => {
  const before = inotifyWatches();
  if (before === null) return; // no /proc (not Linux): nothing to count
  for (const sub of ['x', 'y']) {
    await fsp.mkdir(path.join(dir, sub));
    await Promise.all(Array.from({ length: 150 }, (_, i) => fsp.writeFile(path.join(dir, sub, `f${i}.txt`), String(i))));
  }
  w = new TreeWatcher(dir, () => false);
  await once(w, 'ready');
  expect(/** @type {number} */ (inotifyWatches()) - before).toBeLessThanOrEqual(3); // the root and its two folders
});
