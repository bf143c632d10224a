import { LineFolders } from '../../lib/serve/manifest-index/line-folders.js';
import { checkInputs, inFolder } from '../../lib/serve/site/entries.js';
import { BodyCache } from '../../lib/serve/bodies/body-cache.js';
import { normalizeServeOptions } from '../../lib/serve/http/options.js';

// The parts split out of LineScan and Entries (#19): the folders of the lines, and the pure
// decisions of a first check.

/**
 * The folders LineFolders records from `lines` (each a path, plain; `key` given: decoded).
 * @param {Array<string | { key: string }>} lines
 */
function foldersOf(lines) {
  const text = lines.map((l) => (typeof l === 'string' ? l : '')).join('\n');
  const bytes = Buffer.from(text);
  const folders = new LineFolders(bytes);
  let at = 0;
  for (const l of lines) {
    if (typeof l === 'string') {
      const slash = l.lastIndexOf('/');
      folders.add(at, null, slash === -1 ? -1 : at + Buffer.byteLength(l.slice(0, slash)), slash === -1 ? 0 : slash);
      at += Buffer.byteLength(l) + 1;
    } else {
      folders.add(at, l.key, -1, 0);
      at += 1;
    }
  }
  return [...folders.dirs].sort();
}

test('LineFolders records each folder with its parents, once, and never a folder no valid path has', () => {
  expect(foldersOf(['a.txt', 'd/e/f.txt', 'd/e/g.txt', 'd/h.txt', 'é/x'])).toEqual(['', 'd', 'd/e', 'é']);
  // a decoded path, then a plain one of the same folder: the cache of the last folder was reset
  expect(foldersOf([{ key: 'q/r/s' }, 'q/t'])).toEqual(['', 'q', 'q/r']);
  expect(foldersOf(['../outside/x', '/abs/y', 'ok/z'])).toEqual(['', 'ok']);
  // same length and hash given, different bytes: both folders recorded
  expect(foldersOf(['ab/1', 'cd/2'])).toEqual(['', 'ab', 'cd']);
});

test('inFolder: a file directly in the folder, the root being ""', () => {
  expect(inFolder('a.txt', '')).toBe(true);
  expect(inFolder('d/a.txt', '')).toBe(false);
  expect(inFolder('d/a.txt', 'd')).toBe(true);
  expect(inFolder('d/e/a.txt', 'd')).toBe(false);
  expect(inFolder('dd/a.txt', 'd')).toBe(false);
});

test('checkInputs: a small original is read into memory when the body cache can hold it', () => {
  const opts = normalizeServeOptions('/srv', { memoryFileLimit: 100, memoryBudget: 50 });
  const parts = {
    opts, bodies: new BodyCache(opts.memoryBudget), maskOf: () => 0,
    disk: () => ({ realRoot: '/real', rules: { dotfiles: 'ignore', manifestReal: null } }),
  };
  expect(checkInputs(50, parts).memory).toEqual(['identity']);
  expect(checkInputs(51, parts).memory).toEqual([]); // over the cache's budget
  const roomy = { ...parts, bodies: new BodyCache(1000) };
  expect(checkInputs(100, roomy).memory).toEqual(['identity']);
  expect(checkInputs(101, roomy).memory).toEqual([]); // over memoryFileLimit
  const { cctx } = checkInputs(1, parts);
  expect(cctx).toMatchObject({ root: opts.root, encodings: opts.encodings, realRoot: '/real', dictionaries: opts.dictionaries });
  expect(cctx.realDirs).toEqual(new Map());
});
