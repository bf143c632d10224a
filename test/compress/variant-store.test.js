import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { storeOf, storeDescriptor } from '../../lib/compress/cache/variant-store.js';
import { FolderStore } from '../../lib/compress/cache/folder-store.js';
import { tempDir } from '../helpers/tmp.js';

// The variant cache's store interface (lib/compress/cache/variant-store.js) and the local folder behind it:
// what a store returns, what `below` and `touchOlderThan` change, and that a descriptor is all a
// worker needs to reach the same store.

let tmp;
let store;
beforeEach(async () => {
  tmp = await tempDir('pc-store-');
  store = new FolderStore(path.join(tmp, 'cache'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const keyOf = (s) => crypto.createHash('sha256').update(s).digest('hex');
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
const fileOf = (key) => path.join(tmp, 'cache', key.slice(0, 2), key);

test('put then get: the bytes, their size, digest and encode time; a miss is null', async () => {
  const bytes = crypto.randomBytes(3000);
  expect(await store.get(keyOf('a'))).toBeNull();
  const written = await store.put(keyOf('a'), bytes, { size: bytes.length, encodeMs: 12.5 });
  expect(written).toBe((await fs.stat(fileOf(keyOf('a')))).size);
  const got = await store.get(keyOf('a'));
  expect(got).toEqual({ size: 3000, encodeMs: 12.5, sha256: sha(bytes), bytes });
});

test('an entry without bytes (the output was not smaller) gives its size only; `below` leaves the bytes out', async () => {
  await store.put(keyOf('none'), null, { size: 900, encodeMs: 1 });
  expect(await store.get(keyOf('none'))).toEqual({ size: 900, encodeMs: 1, sha256: null, bytes: null });
  const bytes = crypto.randomBytes(100_000); // above the size read whole with the record
  await store.put(keyOf('big'), bytes, { size: bytes.length, encodeMs: 2 });
  expect((await store.get(keyOf('big'), { below: bytes.length }))?.bytes).toBeNull();
  expect((await store.get(keyOf('big'), { below: bytes.length + 1 }))?.bytes?.equals(bytes)).toBe(true);
});

test('getStream streams the bytes; a stream not read is destroyed, which closes its descriptor', async () => {
  const bytes = crypto.randomBytes(200_000);
  await store.put(keyOf('s'), bytes, { size: bytes.length, encodeMs: 3 });
  const s = await store.getStream(keyOf('s'));
  const chunks = [];
  for await (const c of s.stream) chunks.push(c);
  expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  const unread = await store.getStream(keyOf('s'));
  const closed = new Promise((resolve) => unread.stream.once('close', resolve));
  unread.stream.destroy();
  await closed;
  expect((await store.getStream(keyOf('s'), { below: 10 })).stream).toBeNull();
});

test('touchOlderThan marks an entry used only when it was last used before then', async () => {
  const bytes = Buffer.from('x'.repeat(500));
  await store.put(keyOf('t'), bytes, { size: bytes.length, encodeMs: 0 });
  const old = new Date(Date.now() - 3_600_000);
  await fs.utimes(fileOf(keyOf('t')), old, old);
  await store.get(keyOf('t'), { touchOlderThan: old.getTime() - 1000 });
  // to the millisecond: some Nodes give mtimeMs as seconds × 1000 + ns / 1e6 in floating point (…161.999)
  expect(Math.round((await fs.stat(fileOf(keyOf('t')))).mtimeMs)).toBe(old.getTime());
  await store.get(keyOf('t'), { touchOlderThan: Date.now() });
  expect((await fs.stat(fileOf(keyOf('t')))).mtimeMs).toBeGreaterThan(old.getTime());
});

test('putFile takes a file only while it holds what was made; evict removes an entry', async () => {
  const variant = path.join(tmp, 'v.br');
  await fs.writeFile(variant, 'the encoder wrote this');
  await store.putFile(keyOf('f'), variant, { size: 5, sha256: sha('other'), encodeMs: 1 });
  expect(await store.get(keyOf('f'))).toBeNull();
  await store.putFile(keyOf('f'), variant, { size: 22, sha256: sha('the encoder wrote this'), encodeMs: 1 });
  expect((await store.get(keyOf('f')))?.bytes?.toString()).toBe('the encoder wrote this');
  await store.evict(keyOf('f'));
  expect(await store.get(keyOf('f'))).toBeNull();
});

test('a descriptor is data: one store per thread from it, and a worker reaches the same entries', async () => {
  const d = storeDescriptor({ cacheDir: path.join(tmp, 'cache') });
  expect(structuredClone(d)).toEqual(d);
  expect(storeOf(d)).toBe(storeOf(structuredClone(d)));
  expect(() => storeOf({ kind: 'nowhere' })).toThrow('Unknown variant store nowhere');
  await storeOf(d).put(keyOf('w'), Buffer.from('from the main thread'), { size: 20, encodeMs: 0 });
  const url = new URL('../../lib/compress/cache/variant-store.js', import.meta.url).href;
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.url).then(async ({ storeOf }) => {
      const s = storeOf(workerData.d);
      const got = await s.get(workerData.key);
      await s.put(workerData.key2, Buffer.from('from a worker'), { size: 13, encodeMs: 0 });
      parentPort.postMessage(got.bytes.toString());
    });`, { eval: true, workerData: { url, d, key: keyOf('w'), key2: keyOf('w2') } });
  const [message] = await Promise.all([new Promise((resolve) => worker.once('message', resolve)), new Promise((r) => worker.once('exit', r))]);
  expect(message).toBe('from the main thread');
  expect((await storeOf(d).get(keyOf('w2')))?.bytes?.toString()).toBe('from a worker');
});
