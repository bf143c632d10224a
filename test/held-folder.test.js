import fs from 'node:fs';
import path from 'node:path';
import { inHeldFolder, inHeldFolderOnce, inHeldFolderSync, procFdWorks, releaseHeldFolders } from '../lib/held-folder.js';
import { writeAtomicSync } from '../lib/fs-atomic.js';
import { tempDir } from './helpers/tmp.js';

// The folder held open for a write in the compressed tree (lib/held-folder.js) is kept for the next
// operation in it, and checked again before each: a folder swapped since is refused, not written through.

const skip = procFdWorks() ? test : test.skip; // without /proc/self/fd, each operation checks the real path
let root;
beforeEach(async () => {
  root = fs.realpathSync(await tempDir('pc-held-'));
  fs.mkdirSync(path.join(root, 'dir'));
});
afterEach(() => {
  releaseHeldFolders();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The folders this process holds open. */
const heldNow = () => fs.readdirSync('/proc/self/fd').map((fd) => {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
});

skip('a folder stays held between operations in it, until released', async () => {
  const dir = path.join(root, 'dir');
  writeAtomicSync(path.join(dir, 'a.br'), Buffer.from('a'), { checkParent: true });
  expect(heldNow().filter((p) => p === dir)).toHaveLength(1);
  await inHeldFolder(dir, async (at) => fs.promises.writeFile(path.join(at, 'b.br'), 'b'));
  inHeldFolderSync(dir, (at) => fs.writeFileSync(path.join(at, 'c.br'), 'c'));
  expect(heldNow().filter((p) => p === dir)).toHaveLength(1);
  expect(fs.readdirSync(dir).sort()).toEqual(['a.br', 'b.br', 'c.br']);
  releaseHeldFolders();
  expect(heldNow()).not.toContain(dir);
});

skip('a folder swapped for a symlink after an operation: the next is refused, nothing written on either side', () => {
  const dir = path.join(root, 'dir');
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  writeAtomicSync(path.join(dir, 'a.br'), Buffer.from('a'), { checkParent: true });
  fs.renameSync(dir, path.join(root, 'moved'));
  fs.symlinkSync(elsewhere, dir);
  expect(() => writeAtomicSync(path.join(dir, 'b.br'), Buffer.from('b'), { checkParent: true }))
    .toThrow(expect.objectContaining({ code: 'ERR_PRECOMPRESSOR_FILE' }));
  expect(fs.readdirSync(elsewhere)).toEqual([]);
  expect(fs.readdirSync(path.join(root, 'moved'))).toEqual(['a.br']);
});

skip('a folder removed and made again: the next write goes into the new one', () => {
  const dir = path.join(root, 'dir');
  writeAtomicSync(path.join(dir, 'a.br'), Buffer.from('a'), { checkParent: true });
  fs.rmSync(dir, { recursive: true });
  fs.mkdirSync(dir);
  writeAtomicSync(path.join(dir, 'b.br'), Buffer.from('b'), { checkParent: true });
  expect(fs.readdirSync(dir)).toEqual(['b.br']);
});

skip('several operations under one check: a folder swapped between them, the next lands in the folder held', async () => {
  const dir = path.join(root, 'dir');
  const elsewhere = path.join(root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  await inHeldFolderOnce(dir, async (at, held) => {
    expect(held).toBe(true);
    writeAtomicSync(path.join(at, 'a.br'), Buffer.from('a'));
    fs.renameSync(dir, path.join(root, 'moved'));
    fs.symlinkSync(elsewhere, dir);
    writeAtomicSync(path.join(at, 'b.br'), Buffer.from('b'));
  });
  expect(fs.readdirSync(elsewhere)).toEqual([]);
  expect(fs.readdirSync(path.join(root, 'moved')).sort()).toEqual(['a.br', 'b.br']);
  // The next hold checks again: refused.
  await expect(inHeldFolderOnce(dir, async () => {})).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_FILE' });
});
