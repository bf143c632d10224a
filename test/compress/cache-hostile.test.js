import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { lookupSync } from '../../lib/compress/cache/entry-files.js';
import { exposure } from '../../lib/compress/cache/upkeep.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));

// A variant cache that someone else can write (a CI cache restored from another branch, a shared
// runner): what such a writer can do to a build, and what it cannot.

let tmp;
let cacheDir;
beforeEach(async () => {
  tmp = await tempDir('pc-cache-hostile-');
  cacheDir = path.join(tmp, 'cache');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const SITE = {
  'index.html': textOf(4000, 1),
  'assets/app.js': textOf(300_000, 2),
  'assets/style.css': textOf(20_000, 3),
};

async function build(dir, tree = SITE) {
  await fs.rm(dir, { recursive: true, force: true });
  await writeTree(dir, tree);
}

/** The cache's entry files. */
function entryFiles(dir) {
  if (!fsSync.existsSync(dir)) return [];
  return fsSync.readdirSync(dir, { recursive: true }).map(String).filter((p) => /^[0-9a-f]{2}[\\/][0-9a-f]{64}$/.test(p)).map((p) => path.join(dir, p));
}

/**
 * Rewrite an entry as an attacker would: other compressed bytes, and a record whose size and
 * SHA-256 are recomputed for them (the format is documented in lib/compress/cache/entry-files.js).
 */
function forge(file, bytes) {
  const key = path.basename(file);
  const old = /** @type {any} */ (lookupSync(path.dirname(path.dirname(file)), key));
  const rec = { key, size: bytes.length, bytes: bytes.length, sha256: crypto.createHash('sha256').update(bytes).digest('hex'), encodeMs: old.encodeMs };
  const json = Buffer.from(JSON.stringify(rec));
  const tail = Buffer.alloc(12);
  tail.writeUInt32BE(json.length, 0);
  tail.write('PCCACHE1', 4, 'latin1');
  fsSync.writeFileSync(file, Buffer.concat([bytes, json, tail]));
}

const EVIL = 'alert("owned");'.repeat(50);

/** Forge every entry that holds bytes with a variant of EVIL in the entry's own encoding. */
function forgeAll() {
  let n = 0;
  for (const file of entryFiles(cacheDir)) {
    const e = lookupSync(cacheDir, path.basename(file));
    if (e === null || e.bytes === 0) continue;
    const head = fsSync.readFileSync(file).subarray(0, 2);
    const gz = head[0] === 0x1f && head[1] === 0x8b;
    forge(file, gz ? zlib.gzipSync(EVIL) : zlib.brotliCompressSync(EVIL));
    n++;
  }
  return n;
}

/** Every variant in `dist` decodes to its source. */
async function expectIntact(dist) {
  const manifest = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  let n = 0;
  for (const [rel, e] of Object.entries(manifest.files)) {
    const src = await fs.readFile(path.join(dist, rel));
    if (e.variants.br) expect(zlib.brotliDecompressSync(await fs.readFile(path.join(dist, `${rel}.br`)))).toEqual(src);
    if (e.variants.gzip) expect(zlib.gunzipSync(await fs.readFile(path.join(dist, `${rel}.gz`)))).toEqual(src);
    n += Object.keys(e.variants).length;
  }
  return n;
}

test.each([
  ['buffered', {}],
  ['streamed', { streamThreshold: 100_000 }],
])('a rewritten entry with a recomputed size and SHA-256 is a miss, removed and reported, never written as a variant (%s)', async (_label, extra) => {
  const dist = path.join(tmp, 'dist');
  await build(dist);
  await precompress(dist, { cacheDir, ...extra });
  expect(forgeAll()).toBe(6);

  await build(dist);
  const r = await precompress(dist, { cacheDir, ...extra });
  expect(r.ok).toBe(true);
  expect(r.cache).toMatchObject({ hits: 0, misses: 6 });
  expect(await expectIntact(dist)).toBe(6);
  expect(r.warnings.some((w) => w.path === cacheDir && /6 cache entries did not decode to their source/.test(w.message))).toBe(true);
  // Replaced by good entries: the next emptied build takes them all.
  await build(dist);
  const again = await precompress(dist, { cacheDir, ...extra });
  expect(again.cache).toMatchObject({ hits: 6, misses: 0 });
  expect(await expectIntact(dist)).toBe(6);
});

test('a rewritten entry of one small file among cached ones is rejected on the main thread and encoded; the rest are taken', async () => {
  const dist = path.join(tmp, 'dist');
  const tree = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`i${i}.svg`, textOf(400 + i, 40 + i)]));
  await build(dist, tree);
  await precompress(dist, { cacheDir });
  const files = entryFiles(cacheDir);
  expect(files).toHaveLength(24);
  // One gzip entry, rewritten with a recomputed record.
  const victim = files.find((f) => fsSync.readFileSync(f).subarray(0, 2).equals(Buffer.from([0x1f, 0x8b])));
  forge(victim, zlib.gzipSync(EVIL));

  await build(dist, tree);
  const r = await precompress(dist, { cacheDir });
  expect(r.ok).toBe(true);
  expect(r.cache).toMatchObject({ hits: 23, misses: 1, rejected: 1 });
  expect(await expectIntact(dist)).toBe(24);
  expect(r.warnings.some((w) => w.path === cacheDir && /1 cache entries did not decode/.test(w.message))).toBe(true);
});

describe('a cache folder others can write (#17, item 4)', () => {
  test('a FIFO planted as an entry neither blocks the build nor is read', async () => {
    const dist = path.join(tmp, 'dist');
    await build(dist);
    await precompress(dist, { cacheDir });
    const [victim] = entryFiles(cacheDir);
    fsSync.rmSync(victim);
    execFileSync('mkfifo', [victim]);
    await build(dist);
    // In a child process with a kill as a guard: before the fix, the open() of the FIFO blocked a worker for good.
    const r = await runCommand(process.execPath, [BIN, dist, '--json', '--cache-dir', cacheDir], { timeout: 60_000 });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).cache).toMatchObject({ hits: 5, misses: 1 });
    expect(await expectIntact(dist)).toBe(6);
  });

  /** Every shard of the cache replaced by a symlink to a folder elsewhere holding the same files. */
  function symlinkShards() {
    const elsewhere = path.join(tmp, 'elsewhere');
    fsSync.mkdirSync(elsewhere);
    for (const shard of fsSync.readdirSync(cacheDir).filter((n) => /^[0-9a-f]{2}$/.test(n))) {
      fsSync.cpSync(path.join(cacheDir, shard), path.join(elsewhere, shard), { recursive: true, preserveTimestamps: true });
      fsSync.rmSync(path.join(cacheDir, shard), { recursive: true });
      fsSync.symlinkSync(path.join(elsewhere, shard), path.join(cacheDir, shard));
    }
    return elsewhere;
  }

  /** The files under `dir` with their content and mtime: what must not change there. */
  function stateOf(dir) {
    return fsSync.readdirSync(dir, { recursive: true }).map(String).sort().map((rel) => {
      const st = fsSync.lstatSync(path.join(dir, rel));
      return [rel, st.mtimeMs, st.isFile() ? fsSync.readFileSync(path.join(dir, rel)).toString('base64') : null];
    });
  }

  test('through a shard folder replaced by a symlink, entries are only read (and proven): nothing there is removed, touched or written', async () => {
    const dist = path.join(tmp, 'dist');
    await build(dist);
    await precompress(dist, { cacheDir });
    // Entries made old, so that a take would mark them used (cache-take.js).
    for (const f of entryFiles(cacheDir)) fsSync.utimesSync(f, new Date(2000, 0, 1), new Date(2000, 0, 1));
    const elsewhere = symlinkShards();
    const before = stateOf(elsewhere);
    await build(dist);
    const r = await precompress(dist, { cacheDir });
    expect(r.cache).toMatchObject({ hits: 6, misses: 0 }); // read and proven, as any entry
    expect(stateOf(elsewhere)).toEqual(before); // not touched (mtimes), removed nor written
    expect(await expectIntact(dist)).toBe(6);
  });

  test('a rewritten entry behind a symlinked shard is rejected and encoded, but neither removed there nor replaced through it', async () => {
    const dist = path.join(tmp, 'dist');
    await build(dist);
    await precompress(dist, { cacheDir });
    expect(forgeAll()).toBe(6);
    const elsewhere = symlinkShards();
    const before = stateOf(elsewhere);
    await build(dist);
    const r = await precompress(dist, { cacheDir });
    expect(r.cache).toMatchObject({ hits: 0, misses: 6, rejected: 6 });
    expect(r.warnings.some((w) => w.path === cacheDir && /cache not fully written \(.*is not a folder \(a symlink\?\)/.test(w.message))).toBe(true);
    expect(stateOf(elsewhere)).toEqual(before); // the forged files stay: removing them would act outside the cache
    expect(await expectIntact(dist)).toBe(6);
  });

  test('a cache folder writable by every user is reported', async () => {
    const dist = path.join(tmp, 'dist');
    await build(dist);
    fsSync.mkdirSync(cacheDir, { mode: 0o777 });
    fsSync.chmodSync(cacheDir, 0o777);
    const r = await precompress(dist, { cacheDir });
    expect(r.warnings).toEqual([{ path: cacheDir, message: expect.stringMatching(/^the cache folder is writable by every user \(mode 777\)/) }]);
    fsSync.chmodSync(cacheDir, 0o755);
    await build(dist);
    expect((await precompress(dist, { cacheDir })).warnings).toEqual([]);
  });

  test('exposure(): another owner, others, a foreign group', () => {
    const me = { uid: 1000, gid: 1000 };
    expect(exposure({ uid: 1000, gid: 1000, mode: 0o40755 }, me)).toBeNull();
    expect(exposure({ uid: 1000, gid: 1000, mode: 0o40775 }, me)).toBeNull(); // the user's own group (umask 002)
    expect(exposure({ uid: 0, gid: 0, mode: 0o40755 }, me)).toMatch(/owned by another user \(uid 0\)/);
    expect(exposure({ uid: 1000, gid: 1000, mode: 0o40757 }, me)).toMatch(/writable by every user/);
    expect(exposure({ uid: 1000, gid: 50, mode: 0o40775 }, me)).toMatch(/writable by group 50/);
  });
});

describe('cache clear, prune and eviction remove only entries, only in a folder marked as a cache (#17, item 5)', () => {
  test('a folder without CACHEDIR.TAG is refused with a clear error, nothing removed', async () => {
    const other = path.join(tmp, 'cas');
    const blob = path.join(other, 'ab', 'c'.repeat(64));
    fsSync.mkdirSync(path.dirname(blob), { recursive: true });
    fsSync.writeFileSync(blob, 'a content-addressed blob of another tool');
    fsSync.writeFileSync(path.join(other, 'last-run.json'), '{"theirs":true}');
    for (const action of ['clear', 'prune']) {
      const r = await runCommand(process.execPath, [BIN, 'cache', action, '--cache-dir', other, '--cache-max-size', '0']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^precompressor: cache ${action}: .*cas is not marked as a cache \\(no CACHEDIR\\.TAG\\): nothing removed`));
    }
    expect(fsSync.existsSync(blob)).toBe(true);
    expect(fsSync.existsSync(path.join(other, 'last-run.json'))).toBe(true);
  });

  test('in a marked cache, only whole entries named by their key go; other files and symlinked shards stay', async () => {
    const dist = path.join(tmp, 'dist');
    await build(dist);
    await precompress(dist, { cacheDir });
    expect(fsSync.readFileSync(path.join(cacheDir, 'CACHEDIR.TAG'), 'utf8')).toMatch(/^Signature: 8a477f597d28d172789f06886806bc55\n/);
    const [one] = entryFiles(cacheDir);
    const shard = path.basename(path.dirname(one));
    const other = shard === 'ab' ? 'cd' : 'ab';
    const blob = path.join(cacheDir, other, 'c'.repeat(64)); // a 64-hex name, not an entry
    const temp = path.join(cacheDir, other, 'notes.pctmp'); // not one of our temps
    fsSync.mkdirSync(path.dirname(blob), { recursive: true });
    fsSync.writeFileSync(blob, 'blob');
    fsSync.writeFileSync(temp, 'temp');
    // One shard, with its whole entries, moved elsewhere and replaced by a symlink to it.
    const outside = path.join(tmp, 'outside');
    fsSync.mkdirSync(outside);
    fsSync.renameSync(path.join(cacheDir, shard), path.join(outside, shard));
    fsSync.symlinkSync(path.join(outside, shard), path.join(cacheDir, shard));
    const behind = fsSync.readdirSync(path.join(outside, shard)).length;
    const r = await runCommand(process.execPath, [BIN, 'cache', 'clear', '--cache-dir', cacheDir, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).removed).toBe(6 - behind);
    expect(fsSync.readdirSync(path.join(outside, shard))).toHaveLength(behind);
    for (const f of [blob, temp, path.join(cacheDir, 'CACHEDIR.TAG')]) expect(fsSync.existsSync(f)).toBe(true);
  });
});
