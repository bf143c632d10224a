import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { isOwnOutput, OwnOutputs, splitWatchOptions, watch, eventsTrusted, MANY_EVENTS } from '../../lib/watch/watch.js';
import { ManifestRecords } from '../../lib/watch/passes/manifest-records.js';
import { batchPaths } from '../../lib/watch/passes/batch.js';
import { childFlags } from '../../lib/watch/passes/whole-pass.js';
import { batchLines, watchCommand } from '../../lib/cli/watch.js';
import { tempDir, textOf, noiseOf, writeTree } from '../helpers/tmp.js';
import { writeSite } from '../helpers/site.js';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { deltaPath } from '../../lib/manifest/manifest.js';

// Real file-system events: every wait is for an event (a batch, an output line) with a deadline,
// never a sleep that assumes how long the file system takes.

const WAIT_MS = 15000;
const dirs = [];
const watchers = [];
async function site(tree) {
  const root = await tempDir('pc-watch-');
  dirs.push(root);
  await writeTree(root, tree);
  return root;
}
afterEach(async () => {
  await Promise.all(watchers.splice(0).map((w) => w.close()));
});
afterAll(async () => {
  await Promise.all(dirs.map((d) => fsp.rm(d, { recursive: true, force: true })));
});

function startWatch(root, options = {}) {
  const w = watch(root, { concurrency: 2, ...options });
  watchers.push(w);
  w.batches = [];
  w.on('batch', (b) => w.batches.push(b));
  return w;
}

/** The first batch from now on that satisfies `pred`, or a rejection after WAIT_MS. */
function nextBatch(w, pred, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      w.off('batch', on);
      reject(new Error(`no batch with ${what} within ${WAIT_MS} ms; saw ${JSON.stringify(w.batches.map((b) => b.changes))}`));
    }, WAIT_MS);
    const on = (b) => {
      if (!pred(b)) return;
      clearTimeout(timer);
      w.off('batch', on);
      resolve(b);
    };
    w.on('batch', on);
  });
}
/**
 * The watcher's checks of `file` (its `fs.promises.stat()` of a file still being written), observed
 * by passing each call on: `next()` resolves once the next one has returned, or rejects after WAIT_MS.
 */
function statsOf(file) {
  const { stat } = fs.promises;
  const seen = new EventEmitter();
  fs.promises.stat = function (p, ...rest) {
    const out = stat.call(this, p, ...rest);
    if (p === file) out.then(() => seen.emit('stat'), () => seen.emit('stat'));
    return out;
  };
  return {
    next: () => new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        seen.off('stat', on);
        reject(new Error(`the watcher did not check ${file} within ${WAIT_MS} ms`));
      }, WAIT_MS);
      const on = () => {
        clearTimeout(timer);
        resolve();
      };
      seen.once('stat', on);
    }),
    restore: () => {
      fs.promises.stat = stat;
    },
  };
}
/** Were `rel`'s variants written in this batch (encoded, or taken from the variant cache)? */
const written = (c) => c.action === 'compress' || c.action === 'from cache';
const compressed = (rel) => (b) => b.changes.some((c) => c.path === rel && written(c));
const removed = (rel) => (b) => b.changes.some((c) => c.path === rel && c.action.startsWith('remove'));
const manifestOf = (root) => JSON.parse(fs.readFileSync(path.join(root, 'precompressor-manifest.json'), 'utf8'));
const br = (root, rel) => zlib.brotliDecompressSync(fs.readFileSync(path.join(root, `${rel}.br`))).toString();

/** Every manifest entry matches the files on disk: source size and mtime, variants and their sizes. */
function expectConsistent(root) {
  const m = manifestOf(root);
  for (const [rel, e] of Object.entries(m.files)) {
    const st = fs.statSync(path.join(root, rel));
    expect([rel, st.size, st.mtimeMs]).toEqual([rel, e.size, e.mtimeMs]);
    for (const [enc, v] of Object.entries(e.variants)) {
      const suffix = { br: '.br', gzip: '.gz', zstd: '.zst' }[enc];
      expect([rel, enc, fs.statSync(path.join(root, rel + suffix)).size]).toEqual([rel, enc, v.size]);
    }
  }
}

describe('pure parts', () => {
  test('isOwnOutput: temp files, the manifest, and our listed outputs at the size we listed; not a file of the user\'s', () => {
    const sizes = new Map([['app.js.br', 10], ['app.js.gz', 12], ['app.js.0123456789abcdef.dcz', 5]]);
    const ours = new Map([['app.js.br', 10], ['app.js.gz', 12], ['gone.js.br', null], ['app.js.0123456789abcdef.dcz', 5]]);
    const ctx = { manifestRel: 'precompressor-manifest.json', ours, sizeOf: (r) => sizes.get(r) ?? null };
    expect(isOwnOutput('precompressor-manifest.json', 'change', ctx)).toBe(true);
    expect(isOwnOutput('.app.js.br.123-abc.pctmp', 'add', ctx)).toBe(true);
    expect(isOwnOutput('app.js.br', 'change', ctx)).toBe(true);
    expect(isOwnOutput('app.js.gz', 'add', ctx)).toBe(true);
    expect(isOwnOutput('app.js.0123456789abcdef.dcz', 'add', ctx)).toBe(true);
    expect(isOwnOutput('gone.js.br', 'unlink', ctx)).toBe(true); // we removed it
    // An event on a path of ours whose file is gone again by now: ours (a variant we wrote and then
    // removed because its file failed); without this, a file that keeps failing restarted batches forever.
    expect(isOwnOutput('gone.js.br', 'add', ctx)).toBe(true);
    sizes.set('gone.js.br', 7);
    expect(isOwnOutput('gone.js.br', 'add', ctx)).toBe(false); // someone wrote it again
    expect(isOwnOutput('app.js', 'change', ctx)).toBe(false);
    expect(isOwnOutput('archive.tar.gz', 'add', ctx)).toBe(false);
    sizes.set('app.js.gz', 5000); // the user's file written over our variant
    expect(isOwnOutput('app.js.gz', 'change', ctx)).toBe(false);
  });

  test('OwnOutputs: listed variants and deltas with their sizes, paths of the last two passes without, files of the site not ours', async () => {
    const ours = new OwnOutputs();
    const dict = 'a'.repeat(43) + '=';
    const manifest = /** @type {any} */ ({ schema: 3, files: {
      'a.js': { variants: { br: { size: 10 } }, deltas: { [dict]: { dcz: { size: 4, hash: 'h' } } } },
      'data.csv': { variants: { br: { size: 20 } } },
      'data.csv.gz': { variants: {} },
    } });
    const records = await ManifestRecords.of(manifest, '/nonexistent/precompressor-manifest.json');
    const encodings = ['br', 'gzip'];
    ours.update({ encodings, changes: [{ path: 'a.js', action: 'compress' }, { path: 'b.js.br', action: 'remove (orphan)' }] }, records);
    const sizes = (rels) => rels.map((rel) => ours.get(rel));
    const rels = ['a.js.br', 'a.js.gz', 'b.js.br', 'data.csv.br', 'data.csv.gz', 'a.js', deltaPath('a.js', dict, 'dcz'), 'c.js.br'];
    expect(sizes(rels)).toEqual([10, null, null, 20, undefined, undefined, 4, undefined]);
    ours.update({ encodings, changes: [] }, records); // the pass before's paths are still ours
    expect(sizes(['a.js.gz', 'b.js.br'])).toEqual([null, null]);
    ours.update({ encodings, changes: [] }, records); // not two passes later
    expect(sizes(['a.js.gz', 'b.js.br', 'a.js.br'])).toEqual([undefined, undefined, 10]);
  });

  test('batchPaths: each path, a file\'s variant and recorded delta paths, a variant\'s or delta\'s file', () => {
    const dict = 'a'.repeat(43) + '=';
    const entries = { 'a.js': { variants: {}, deltas: { [dict]: { dcz: { size: 4, hash: 'h' } } } } };
    const records = { entry: (rel) => entries[rel] };
    const variants = (rel) => [rel, `${rel}.br`, `${rel}.gz`, `${rel}.zst`];
    expect([...batchPaths(['a.js'], records)].sort()).toEqual([...variants('a.js'), deltaPath('a.js', dict, 'dcz')].sort());
    expect(batchPaths(['b.css.br'], records)).toEqual(new Set([...variants('b.css.br'), ...variants('b.css')]));
    expect(batchPaths([deltaPath('c.js', dict, 'dcb')], records)).toEqual(new Set([...variants(deltaPath('c.js', dict, 'dcb')), ...variants('c.js')]));
  });

  test('childFlags: the whole pass\'s process keeps memory and feature flags, not -e, --inspect or --test', () => {
    expect(childFlags(['--max-old-space-size=4096', '--inspect=0', '-e', 'watch()', '--experimental-vm-modules', '--test', '--no-warnings']))
      .toEqual(['--max-old-space-size=4096', '--experimental-vm-modules', '--no-warnings']);
  });

  test('eventsTrusted: a burst of events that may have overflowed the kernel\'s queue makes a whole pass', () => {
    expect([1, MANY_EVENTS - 1, MANY_EVENTS, 100_000].map(eventsTrusted)).toEqual([true, true, false, false]);
  });

  test('watch options: defaults, validation with the one error template', () => {
    expect(splitWatchOptions({ encodings: ['br'], debounce: 5 })).toEqual({
      api: { encodings: ['br'] },
      watch: { debounce: 5, awaitWriteFinish: 100, usePolling: false },
    });
    expect(() => splitWatchOptions({ debounce: -1 })).toThrow('Expected options.debounce to be a non-negative number of milliseconds, got -1 (number)');
    expect(() => splitWatchOptions({ awaitWriteFinish: 'yes' })).toThrow(expect.objectContaining({ code: 'ERR_PRECOMPRESSOR_OPTION' }));
    expect(() => splitWatchOptions({ debouce: 5 })).toThrow(/Expected options.debouce to be one of the known options \(.*debounce, awaitWriteFinish, usePolling\)/);
    expect(() => watch('.', { gzipLevel: 0 })).toThrow('Expected options.gzipLevel to be an integer from 1 to 9, got 0 (number)');
  });

  test('batchLines: one line per change, errors always, nothing else when quiet', () => {
    const batch = {
      changes: [{ path: 'a.js', action: 'compress' }, { path: 'b.js.br', action: 'remove (orphan)' }],
      failures: [{ path: 'c.js', message: 'EACCES' }],
      warnings: [{ path: 'l', message: 'outside' }],
    };
    expect(batchLines(batch, { time: 'T' })).toEqual({
      out: ['T compressed a.js', 'T removed (source gone) b.js.br'],
      err: ['T error: c.js: EACCES', 'T warning: l: outside'],
    });
    expect(batchLines(batch, { time: 'T', quiet: true })).toEqual({ out: [], err: ['T error: c.js: EACCES'] });
  });
  test('batchLines: a file that got no variant says so; a warning already printed is not printed again', () => {
    const warned = new Set();
    const batch = { changes: [{ path: 'random.bin', action: 'compress', skipped: 'not-smaller' }], failures: [], warnings: [{ path: 'x.gz', message: 'mine' }] };
    expect(batchLines(batch, { time: 'T', warned })).toEqual({ out: ['T random.bin: no variant, compressed output not smaller'], err: ['T warning: x.gz: mine'] });
    expect(batchLines(batch, { time: 'T', warned }).err).toEqual([]);
  });
});

describe('watch()', () => {
  (deltaEncoders().length > 0 ? test : test.skip)('the site dictionary: made by the first pass (its own writes start no batch), an edited page gets its variant against it', async () => {
    const root = await tempDir('pc-watch-');
    dirs.push(root);
    const pages = await writeSite(root, 6);
    const w = startWatch(root, { deltas: false });
    const first = await w.ready;
    const rel = first.siteDictionary.path;
    expect(first.changes).toContainEqual({ path: rel, action: 'site dictionary' });
    expect(w.batches).toHaveLength(1);
    const page = pages[2].rel;
    const edited = nextBatch(w, compressed(page), `${page} edited`);
    await fsp.writeFile(path.join(root, page), (await fsp.readFile(path.join(root, page), 'utf8')).replace('</main>', '<p>One more paragraph of its own.</p></main>'));
    const b = await edited;
    expect(b.siteDictionary.path).toBe(rel);
    const key = JSON.parse(await fsp.readFile(path.join(root, 'precompressor-manifest.json'), 'utf8')).files[rel].dictionary.hash;
    expect(b.changes.map((c) => c.path).sort()).toEqual([page, ...deltaEncoders().map((e) => deltaPath(page, key, e))].sort());
    expectConsistent(root);
  });

  test('a file written back to an earlier content gets its variants from the variant cache, not encoded again', async () => {
    const root = await site({ 'a.txt': textOf(6000, 1), 'b.txt': textOf(3000, 2) });
    const w = startWatch(root);
    await w.ready;
    const edited = nextBatch(w, compressed('a.txt'), 'a.txt edited');
    await fsp.writeFile(path.join(root, 'a.txt'), textOf(7000, 3));
    expect((await edited).changes).toEqual([{ path: 'a.txt', action: 'compress' }]);
    const reverted = nextBatch(w, compressed('a.txt'), 'a.txt reverted');
    await fsp.writeFile(path.join(root, 'a.txt'), textOf(6000, 1));
    const b = await reverted;
    expect(b.changes).toEqual([{ path: 'a.txt', action: 'from cache' }]);
    expect(b.cache).toMatchObject({ enabled: true, hits: 2, misses: 0 });
    expect(br(root, 'a.txt')).toBe(textOf(6000, 1));
    expectConsistent(root);
  });

  test('first pass, then change, unlink and a new folder, each in a batch; own outputs never start one', async () => {
    const root = await site({ 'a.txt': textOf(3000, 1), 'b.txt': textOf(3000, 2), 'keep.css': textOf(2000, 3) });
    const w = startWatch(root);
    const first = await w.ready;
    expect(first.changes.map((c) => c.path)).toEqual(['a.txt', 'b.txt', 'keep.css']);
    expect(w.batches).toHaveLength(1);

    const changed = nextBatch(w, compressed('a.txt'), 'a.txt compressed');
    await fsp.writeFile(path.join(root, 'a.txt'), textOf(5000, 9));
    const b1 = await changed;
    expect(b1.changes).toEqual([{ path: 'a.txt', action: 'compress' }]);
    expect(br(root, 'a.txt')).toBe(textOf(5000, 9));

    const gone = nextBatch(w, removed('b.txt.br'), 'b.txt variants removed');
    await fsp.unlink(path.join(root, 'b.txt'));
    await gone;
    expect(fs.existsSync(path.join(root, 'b.txt.br'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'b.txt.gz'))).toBe(false);
    expect(manifestOf(root).files['b.txt']).toBeUndefined();

    const both = new Set();
    const folder = nextBatch(w, (b) => {
      for (const c of b.changes) if (written(c)) both.add(c.path);
      return both.has('new/deep/x.js') && both.has('new/y.json');
    }, 'both new files compressed');
    await writeTree(root, { 'new/deep/x.js': textOf(4000, 4), 'new/y.json': JSON.stringify({ v: textOf(1000, 5) }) });
    await folder;
    expect(br(root, 'new/deep/x.js')).toBe(textOf(4000, 4));

    // No batch was started by our own writes: every event names a file the test touched.
    const touched = new Set(['a.txt', 'b.txt', 'new/deep/x.js', 'new/y.json', 'new', 'new/deep']);
    for (const b of w.batches.slice(1)) {
      expect(b.events.length).toBeGreaterThan(0);
      for (const e of b.events) expect(touched).toContain(e.path);
    }
    expect(w.batches.every((b) => b.failures.length === 0)).toBe(true);
    expect(manifestOf(root).files['keep.css'].variants.br).toBeDefined();
    await w.close();
    expectConsistent(root);
  });

  test('with dotfiles, a file whose name starts with two dots (..foo.js) is watched like any other', async () => {
    const root = await site({ 'a.txt': textOf(3000, 1) });
    const w = startWatch(root, { dotfiles: true });
    await w.ready;
    const added = nextBatch(w, compressed('..foo.js'), '..foo.js compressed');
    await fsp.writeFile(path.join(root, '..foo.js'), textOf(4000, 7));
    const b = await added;
    expect(b.events).toEqual([{ event: 'add', path: '..foo.js' }]);
    expect(br(root, '..foo.js')).toBe(textOf(4000, 7));
    expect(manifestOf(root).files['..foo.js'].variants.br).toBeDefined();
  });

  test('a file written in many chunks is compressed whole, once the writes are done', async () => {
    const root = await site({ 'small.txt': textOf(100) });
    const w = startWatch(root, { debounce: 0 });
    await w.ready;
    const content = textOf(4 * 1024 * 1024, 7);
    // Read at each batch (the manifest is written before the batch event): what size was compressed.
    const sizes = [];
    w.on('batch', (b) => compressed('big.txt')(b) && sizes.push(manifestOf(root).files['big.txt'].size));
    const done = nextBatch(w, compressed('big.txt'), 'big.txt compressed');
    const fh = await fsp.open(path.join(root, 'big.txt'), 'w');
    for (let i = 0; i < content.length; i += 64 * 1024) await fh.write(content.slice(i, i + 64 * 1024));
    await fh.close();
    await done;
    // Every batch that compressed it saw the whole file (never a prefix of it).
    expect(sizes).toEqual([content.length]);
    expect(br(root, 'big.txt')).toBe(content);
    await w.close();
    expectConsistent(root);
  });

  // A slow writer keeps writing big.txt while other.txt changes and starts a batch: that batch must
  // leave big.txt as it was. It writes its next 16 kB each time the watcher has checked big.txt's size,
  // so every check sees it grown and it cannot settle, whatever the machine's load.
  test.each([
    ['a new file gets no entry and no variant', false],
    ['a file rewritten in place keeps its entry and variants', true],
  ])('still being written while another file starts a batch: %s until it settles', async (_, existed) => {
    const oldText = textOf(30000, 3);
    const root = await site({ 'other.txt': textOf(3000, 1), ...(existed ? { 'big.txt': oldText } : {}) });
    const w = startWatch(root, { debounce: 50, awaitWriteFinish: 500 });
    await w.ready;
    const read = (rel) => (fs.existsSync(path.join(root, rel)) ? fs.readFileSync(path.join(root, rel)) : null);
    const before = { entry: manifestOf(root).files['big.txt'] ?? null, br: read('big.txt.br'), gz: read('big.txt.gz') };
    expect(before.entry === null).toBe(!existed);
    // What every pass left (the manifest is written before its batch event, and passes never overlap).
    const seen = [];
    w.on('batch', (b) => seen.push({ entry: manifestOf(root).files['big.txt'] ?? null, br: read('big.txt.br'), gz: read('big.txt.gz'), held: b.held }));

    let otherBatch = null;
    const other = nextBatch(w, compressed('other.txt'), 'other.txt compressed').then((b) => (otherBatch = b));
    let written = '';
    const checks = statsOf(path.join(root, 'big.txt'));
    const fh = await fsp.open(path.join(root, 'big.txt'), 'w');
    try {
      // Write until the other file's batch has run, and a few chunks more.
      for (let i = 0, after = 0; i < 300 && after < 5; i++) {
        await checks.next();
        const chunk = textOf(16 * 1024, 100 + i);
        await fh.write(chunk);
        written += chunk;
        if (i === 2) await fsp.writeFile(path.join(root, 'other.txt'), textOf(5000, 2));
        if (otherBatch) after++;
      }
    } finally {
      checks.restore();
      await fh.close();
    }
    const b = await other;
    const whole = nextBatch(w, (x) => compressed('big.txt')(x) && manifestOf(root).files['big.txt'].size === written.length, 'big.txt compressed whole');
    await whole;

    // Every batch until the last one left big.txt as it was: never an entry or a variant of a part of it.
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const s of seen.slice(0, -1)) {
      expect(s.entry).toEqual(before.entry);
      expect(s.br).toEqual(before.br);
      expect(s.gz).toEqual(before.gz);
    }
    // The other file's batch ran while big.txt was being written, and was not blocked by it.
    expect(b.held).toEqual(['big.txt']);
    expect(br(root, 'other.txt')).toBe(textOf(5000, 2));
    expect(seen.at(-1).held).toEqual([]);
    expect(br(root, 'big.txt')).toBe(written);
    expect(zlib.gunzipSync(fs.readFileSync(path.join(root, 'big.txt.gz'))).toString()).toBe(written);
    expect(w.batches.every((x) => x.failures.length === 0)).toBe(true);
    await w.close();
    expectConsistent(root);
  });

  test('a file of the user\'s written at a variant path starts a batch that keeps it, warns and lists it; its removal gives X its .gz back', async () => {
    const root = await site({ 'data.csv': textOf(3000, 1) });
    const w = startWatch(root);
    await w.ready;
    expect(zlib.gunzipSync(fs.readFileSync(path.join(root, 'data.csv.gz'))).toString()).toBe(textOf(3000, 1));
    const mine = zlib.gzipSync(textOf(50_000, 2));
    const kept = nextBatch(w, (b) => b.warnings.some((x) => x.path === 'data.csv.gz'), 'a warning about data.csv.gz');
    await fsp.writeFile(path.join(root, 'data.csv.gz'), mine); // over our own variant
    const b = await kept;
    expect(b.warnings).toEqual([expect.objectContaining({ path: 'data.csv.gz', message: expect.stringMatching(/^not written by precompressor: kept as your own file/) })]);
    expect(fs.readFileSync(path.join(root, 'data.csv.gz'))).toEqual(mine);
    expect(Object.keys(manifestOf(root).files['data.csv'].variants)).toEqual(['br']);
    expect(manifestOf(root).files['data.csv.gz']).toMatchObject({ size: mine.length });

    // A change to data.csv is compressed to .br only; the user's file stays as it is.
    const changed = nextBatch(w, compressed('data.csv'), 'data.csv compressed');
    await fsp.writeFile(path.join(root, 'data.csv'), textOf(4000, 3));
    await changed;
    expect(fs.readFileSync(path.join(root, 'data.csv.gz'))).toEqual(mine);

    const back = nextBatch(w, (x) => x.changes.some((c) => c.path === 'data.csv' && written(c)), 'data.csv compressed again');
    await fsp.unlink(path.join(root, 'data.csv.gz'));
    await back;
    expect(zlib.gunzipSync(fs.readFileSync(path.join(root, 'data.csv.gz'))).toString()).toBe(textOf(4000, 3));
    await w.close();
    expectConsistent(root);
  });

  test('mv sub sub2 and an edit of sub2/x.txt: the variants that moved with it are ours (the manifest lists them under sub/), replaced (#27)', async () => {
    const root = await site({ 'a.txt': textOf(3000, 1), 'sub/x.txt': textOf(6000, 2) });
    const w = startWatch(root);
    await w.ready;
    const again = nextBatch(w, compressed('sub2/x.txt'), 'sub2/x.txt compressed');
    // Both at once, so that the pass that follows sees the moved variants beside the new content.
    fs.renameSync(path.join(root, 'sub'), path.join(root, 'sub2'));
    fs.writeFileSync(path.join(root, 'sub2/x.txt'), textOf(6500, 3));
    const b = await again;
    expect(b.warnings).toEqual([]);
    expect(br(root, 'sub2/x.txt')).toBe(textOf(6500, 3));
    expect(zlib.gunzipSync(fs.readFileSync(path.join(root, 'sub2/x.txt.gz'))).toString()).toBe(textOf(6500, 3));
    await w.close();
    expectConsistent(root);
  });

  // A batch looks only at the paths its events name. A file changed through a hard link from
  // outside the folder sends the folder's watcher no event (inotify reports a change to the folder
  // the writer named): a batch leaves it as it was, a whole pass (a folder removed) finds it.
  test('a batch stats only its paths; a file changed behind the watcher\'s back waits for the whole pass a removed folder starts', async () => {
    const outside = await tempDir('pc-watch-outside-');
    dirs.push(outside);
    const others = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, textOf(1500, 10 + i)]));
    const root = await site({ 'a.txt': textOf(3000, 1), 'sub/x.txt': textOf(2000, 2), ...others });
    await fsp.writeFile(path.join(outside, 'b.txt'), textOf(3000, 3));
    await fsp.link(path.join(outside, 'b.txt'), path.join(root, 'b.txt'));
    const w = startWatch(root);
    const first = await w.ready;
    expect(first).toMatchObject({ whole: true, files: expect.objectContaining({ scanned: 23 }) });

    await fsp.writeFile(path.join(outside, 'b.txt'), textOf(4000, 4)); // the same inode: no event here
    const changed = nextBatch(w, compressed('a.txt'), 'a.txt compressed');
    await fsp.writeFile(path.join(root, 'a.txt'), textOf(5000, 5));
    const b = await changed;
    expect(b).toMatchObject({ whole: false, changes: [{ path: 'a.txt', action: 'compress' }] });
    expect(b.files.scanned).toBe(1);
    expect(manifestOf(root).files['b.txt'].size).toBe(3000);
    expect(br(root, 'b.txt')).toBe(textOf(3000, 3));

    const whole = nextBatch(w, compressed('b.txt'), 'b.txt compressed by a whole pass');
    await fsp.rm(path.join(root, 'sub'), { recursive: true });
    expect(await whole).toMatchObject({ whole: true });
    expect(br(root, 'b.txt')).toBe(textOf(4000, 4));
    expect(manifestOf(root).files['sub/x.txt']).toBeUndefined();
    await w.close();
    expectConsistent(root);
  });

  test('a symlink to a changed file: its entry and variants follow in the batch (the event names only the target)', async () => {
    const root = await site({ 'real.txt': textOf(3000, 1), 'other.txt': textOf(2000, 2) });
    await fsp.symlink('real.txt', path.join(root, 'alias.txt'));
    const w = startWatch(root);
    await w.ready;
    expect(manifestOf(root).files['alias.txt'].size).toBe(3000);
    const changed = nextBatch(w, (b) => compressed('real.txt')(b) && compressed('alias.txt')(b), 'real.txt and alias.txt compressed');
    await fsp.writeFile(path.join(root, 'real.txt'), textOf(4000, 3));
    expect(await changed).toMatchObject({ whole: false });
    expect(br(root, 'alias.txt')).toBe(textOf(4000, 3));
    expect(manifestOf(root).files['alias.txt'].size).toBe(4000);
    // a link made after the whole pass is looked at by later batches too
    await fsp.symlink('other.txt', path.join(root, 'alias2.txt'));
    await nextBatch(w, compressed('alias2.txt'), 'alias2.txt compressed');
    const again = nextBatch(w, compressed('alias2.txt'), 'alias2.txt compressed again');
    await fsp.writeFile(path.join(root, 'other.txt'), textOf(2500, 4));
    expect(await again).toMatchObject({ whole: false });
    expect(br(root, 'alias2.txt')).toBe(textOf(2500, 4));
    await w.close();
    expectConsistent(root);
  });

  test('after a manifest written by someone else the next batch is a whole pass, then batches again', async () => {
    const root = await site({ 'a.txt': textOf(3000, 1), 'b.txt': textOf(3000, 2) });
    const w = startWatch(root);
    await w.ready;
    const file = path.join(root, 'precompressor-manifest.json');
    // Another writer's manifest: b.txt's entry lost (its variants stay on disk).
    const m = manifestOf(root);
    delete m.files['b.txt'];
    await fsp.writeFile(file, JSON.stringify(m));
    let next = nextBatch(w, compressed('a.txt'), 'a.txt compressed');
    await fsp.writeFile(path.join(root, 'a.txt'), textOf(4000, 3));
    expect(await next).toMatchObject({ whole: true });
    expect(manifestOf(root).files['b.txt']).toMatchObject({ size: 3000 });
    next = nextBatch(w, compressed('a.txt'), 'a.txt compressed again');
    await fsp.writeFile(path.join(root, 'a.txt'), textOf(4500, 4));
    expect(await next).toMatchObject({ whole: false, changes: [{ path: 'a.txt', action: 'compress' }] });
    await w.close();
    expectConsistent(root);
  });

  test('the whole pass runs in a process of its own: its error keeps its code; onProgress (a function) runs it here', async () => {
    const root = await site({ 'a.txt': textOf(3000, 1), 'sub/b.txt': textOf(2000, 2) });
    const bad = startWatch(root, { manifest: path.join(root, 'sub') }); // a folder: refused by the pass
    await expect(bad.ready).rejects.toMatchObject({ name: 'PrecompressorError', code: 'ERR_PRECOMPRESSOR_MANIFEST' });
    const progress = [];
    const w = startWatch(root, { onProgress: (p) => progress.push(p.filesDone) });
    const first = await w.ready;
    expect(first.whole).toBe(true);
    expect(first.changes.filter(written).map((c) => c.path)).toEqual(['a.txt', 'sub/b.txt']);
    expect(progress.at(-1)).toBe(2);
    expect(br(root, 'sub/b.txt')).toBe(textOf(2000, 2));
  });

  test('a pass that throws (the folder is gone) is an error event, not a crash', async () => {
    const parent = await site({ 'site/a.txt': textOf(2000) });
    const root = path.join(parent, 'site');
    const w = startWatch(root);
    await w.ready;
    const errors = [];
    const errored = new Promise((resolve) => w.on('error', (err) => errors.push(err) && resolve(undefined)));
    // The folder itself disappears: the pass cannot walk it.
    await fsp.rm(root, { recursive: true });
    await errored;
    expect(errors[0]).toMatchObject({ code: 'ERR_PRECOMPRESSOR_DIR' });
    await w.close();
  });
});

describe('serveStatic beside the watcher', () => {
  const serveReady = fs.existsSync(new URL('../../lib/serve/adapters/middleware.js', import.meta.url));
  (serveReady ? test : test.skip)('serves the new content once its variants are written, never a wrong Content-Length', async () => {
    const { serveStatic } = await import('../../lib/serve/adapters/middleware.js');
    const root = await site({ 'app.js': textOf(20000, 1), 'index.html': textOf(3000, 2) });
    const w = startWatch(root);
    await w.ready;
    const server = http.createServer(serveStatic(root));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
    const get = () =>
      new Promise((resolve, reject) => {
        http.get({ port, host: '127.0.0.1', path: '/app.js', headers: { 'accept-encoding': 'br' } }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            const text = res.headers['content-encoding'] === 'br' ? zlib.brotliDecompressSync(body).toString() : body.toString();
            resolve({ enc: res.headers['content-encoding'], length: Number(res.headers['content-length']), bytes: body.length, text });
          });
        }).on('error', reject);
      });
    try {
      expect(await get()).toMatchObject({ enc: 'br', text: textOf(20000, 1) });
      const oldText = textOf(20000, 1);
      const newText = textOf(30000, 5);
      let batched = false;
      const batch = nextBatch(w, compressed('app.js'), 'app.js compressed').then(() => (batched = true));
      await fsp.writeFile(path.join(root, 'app.js'), newText);
      // While the batch runs: every response is whole and labelled right (old or new content).
      // No batch can start before the write's event has settled (awaitWriteFinish) and been
      // debounced: the loop must have run, or nothing here was checked during the batch.
      const seen = [];
      while (!batched) {
        const r = await get();
        expect(r.length).toBe(r.bytes);
        expect([oldText, newText]).toContain(r.text);
        seen.push(r.text === newText);
        if (seen.length > 200) break;
      }
      expect(seen.length).toBeGreaterThan(0);
      await batch;
      // After the batch: the new content, and (once the manifest is reloaded) as br.
      const deadline = Date.now() + WAIT_MS;
      let r = await get();
      while (r.enc !== 'br' && Date.now() < deadline) {
        expect(r.text).toBe(newText);
        expect(r.length).toBe(r.bytes);
        await new Promise((resolve) => setImmediate(resolve));
        r = await get();
      }
      expect(r).toMatchObject({ enc: 'br', text: newText });
      expect(r.length).toBe(r.bytes);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('watchCommand and the CLI', () => {
  /** A writable that records and resolves waiters when a line matches. */
  function sink() {
    let text = '';
    const waiters = [];
    return {
      get text() {
        return text;
      },
      write(s) {
        text += s;
        for (const wt of waiters.splice(0)) if (wt.re.test(text)) wt.resolve(undefined); else waiters.push(wt);
        return true;
      },
      waitFor(re) {
        if (re.test(text)) return Promise.resolve(undefined);
        return new Promise((resolve, reject) => {
          const wt = { re, resolve };
          waiters.push(wt);
          setTimeout(() => reject(new Error(`no output matching ${re} within ${WAIT_MS} ms:\n${text}`)), WAIT_MS).unref();
        });
      },
    };
  }

  test('prints one line per file and closes cleanly on SIGINT', async () => {
    const root = await site({ 'a.txt': textOf(3000) });
    const stdout = sink();
    const stderr = sink();
    const signals = new EventEmitter();
    const code = watchCommand(root, {}, { stdout, stderr, signals });
    await stdout.waitFor(/watching /);
    await fsp.writeFile(path.join(root, 'b.txt'), textOf(4000, 397)); // (content of its own: not in this file's cache)
    await stdout.waitFor(/\d\d:\d\d:\d\d compressed b\.txt\n/);
    signals.emit('SIGINT');
    expect(await code).toBe(0);
    expect(stderr.text).toMatch(/SIGINT, finishing the current batch/);
    expect(signals.listenerCount('SIGINT')).toBe(0);
    expectConsistent(root);
  });

  test('a file that got no variant is logged as such, not as compressed', async () => {
    const root = await site({ 'a.txt': textOf(3000) });
    const stdout = sink();
    const signals = new EventEmitter();
    const code = watchCommand(root, {}, { stdout, stderr: sink(), signals });
    await stdout.waitFor(/watching /);
    await fsp.writeFile(path.join(root, 'random.bin'), noiseOf(4096));
    await stdout.waitFor(/\d\d:\d\d:\d\d random\.bin: no variant, compressed output not smaller\n/);
    signals.emit('SIGINT');
    expect(await code).toBe(0);
    expect(stdout.text).not.toMatch(/compressed random\.bin/);
  });

  test('quiet prints no per-file lines; errors are still printed; a missing folder exits 2', async () => {
    const root = await site({ 'a.txt': textOf(3000), 'blocker': 'a file' });
    const stdout = sink();
    const stderr = sink();
    const signals = new EventEmitter();
    // The manifest path is under a file: every pass reports it, and the watcher keeps going.
    const code = watchCommand(root, { manifest: 'blocker/m.json' }, { quiet: true, stdout, stderr, signals });
    await stderr.waitFor(/error: .*blocker\/m\.json: /);
    await fsp.writeFile(path.join(root, 'c.txt'), textOf(3000, 8));
    await stderr.waitFor(/error: [\s\S]*error: .*blocker\/m\.json/);
    expect(fs.existsSync(path.join(root, 'c.txt.br'))).toBe(true);
    signals.emit('SIGTERM');
    expect(await code).toBe(0);
    expect(stdout.text).toBe('');
    expect(await watchCommand(path.join(root, 'missing'), {}, { stdout, stderr, signals })).toBe(2);
    expect(stderr.text).toMatch(/missing does not exist/);
  });

  test('precompressor <dir> --watch in a real process: SIGTERM exits 0 with the manifest matching the files', async () => {
    const root = await site({ 'a.txt': textOf(3000), 'sub/b.css': textOf(2000, 2) });
    const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
    const child = spawn(process.execPath, [bin, root, '--watch', '--concurrency', '2'], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = sink();
    const stderr = sink();
    child.stdout.on('data', (d) => stdout.write(String(d)));
    child.stderr.on('data', (d) => stderr.write(String(d)));
    const exited = new Promise((resolve) => child.on('close', (c, signal) => resolve({ c, signal })));
    try {
      await stdout.waitFor(/watching /);
      await fsp.writeFile(path.join(root, 'sub/b.css'), textOf(6000, 6));
      await stdout.waitFor(/compressed sub\/b\.css\n/);
      await fsp.unlink(path.join(root, 'a.txt'));
      await stdout.waitFor(/removed \(source gone\) a\.txt\.br\n/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toEqual({ c: 0, signal: null });
    expect(stderr.text).not.toMatch(/error/);
    expectConsistent(root);
    expect(Object.keys(manifestOf(root).files)).toEqual(['sub/b.css']);
  });
});
