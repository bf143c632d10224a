import { classify, decide, eligibility, brotliModeFor, variantsIntact, extensionOf } from '../../lib/compress/plan/actions.js';
import { normalizeOptions, DEFAULT_SKIP_EXTENSIONS } from '../../lib/options.js';
import { brotliWindowBits } from '../../lib/compress/encoders/encode.js';

const f = (rel, size = 100, mtimeMs = 1) => ({ rel, size, mtimeMs });

describe('classify', () => {
  test('X.br and X.gz are variants of X; a lone .gz is a source', () => {
    const { sources, variants, orphans } = classify([f('a.js'), f('a.js.br', 10), f('a.js.gz', 12), f('b.tar.gz'), f('m.json')], 'm.json');
    expect(sources.map((s) => s.rel)).toEqual(['a.js', 'b.tar.gz']);
    expect([...variants.get('a.js')]).toEqual([['br', 10], ['gzip', 12]]);
    expect(orphans).toEqual([]);
  });
  test('a variant whose source is gone is an orphan only if the previous manifest recorded it, with its size, before it was written', () => {
    const previous = { generatedAt: new Date(1000).toISOString(), files: { 'gone.js': { variants: { br: { size: 100 } } }, 'resized.js': { variants: { br: { size: 99 } } }, 'later.js': { variants: { br: { size: 100 } } } } };
    const files = [f('gone.js.br'), f('user.js.br'), f('resized.js.br'), f('later.js.br', 100, 5000)];
    const { sources, orphans } = classify(files, null, /** @type {any} */ (previous));
    expect(orphans).toEqual(['gone.js.br']);
    expect(sources.map((s) => s.rel)).toEqual(['user.js.br', 'resized.js.br', 'later.js.br']);
  });
  test('a file of the user\'s at a variant path is a source, not a variant; nor is a delta-named one', () => {
    const files = [f('a.js'), f('a.js.br', 10), f('a.js.gz', 12), f('a.js.0123456789abcdef.dcz', 5)];
    const { sources, variants, deltas } = classify(files, null, null, new Set(['a.js.gz', 'a.js.0123456789abcdef.dcz']));
    expect(sources.map((s) => s.rel)).toEqual(['a.js', 'a.js.gz', 'a.js.0123456789abcdef.dcz']);
    expect([...variants.get('a.js')]).toEqual([['br', 10]]);
    expect(deltas.size).toBe(0);
  });
  test('the manifest is never a source', () => {
    expect(classify([f('precompressor-manifest.json')], 'precompressor-manifest.json').sources).toEqual([]);
  });
});

describe('eligibility', () => {
  const opts = normalizeOptions('/x', { exclude: ['**/*.map'] });
  const eligible = eligibility(opts);
  test.each([
    ['app.js', 10, null],
    ['img/logo.PNG', 10, 'compressed-format'],
    ['font.woff2', 10, 'compressed-format'],
    ['app.js.map', 10, 'excluded'],
    ['empty.txt', 0, 'empty'],
    ['noext', 10, null],
  ])('%s (%d bytes) → %s', (rel, size, reason) => {
    expect(eligible(rel, size)).toBe(reason);
  });
  test('include narrows, skipExtensions replaces the built-in list', () => {
    const e = eligibility(normalizeOptions('/x', { include: ['**/*.png'], skipExtensions: [] }));
    expect(e('a.png', 5)).toBe(null);
    expect(e('a.js', 5)).toBe('excluded');
  });
  test('the built-in skip list covers images, fonts, media and archives', () => {
    for (const ext of ['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'woff', 'woff2', 'mp3', 'mp4', 'webm', 'ogg', 'zip', 'gz', 'br', 'zst']) {
      expect(DEFAULT_SKIP_EXTENSIONS).toContain(ext);
    }
  });
});

describe('decide', () => {
  const settings = { encodings: ['br', 'gzip'], brotliQuality: 11, gzipLevel: 9, minRatio: 1 };
  const eligible = () => null;
  const prevEntry = { size: 100, mtimeMs: 1, hash: 'h', variants: { br: { size: 20 }, gzip: { size: 30 } } };
  const previous = /** @type {any} */ ({ tool: 'precompressor@1.0.0', settings, files: { 'a.js': prevEntry } });
  const onDisk = new Map([['br', 20], ['gzip', 30]]);
  const run = (file, disk, prev = previous, force = false) =>
    decide({ sources: [file], variants: new Map(disk ? [['a.js', disk]] : []) }, prev, { settings, tool: 'precompressor@1.0.0', force, eligible })[0].action;

  test('same stat, intact variants → fresh', () => expect(run(f('a.js', 100, 1), onDisk)).toBe('fresh'));
  test('changed mtime → verify (hash decides)', () => expect(run(f('a.js', 100, 2), onDisk)).toBe('verify'));
  test('a variant of another size on disk → compress', () => expect(run(f('a.js'), new Map([['br', 21], ['gzip', 30]]))).toBe('compress'));
  test('a missing variant → compress', () => expect(run(f('a.js'), new Map([['br', 20]]))).toBe('compress'));
  test('other settings → compress', () => expect(run(f('a.js'), onDisk, { ...previous, settings: { ...settings, gzipLevel: 8 } })).toBe('compress'));
  test('another tool version → compress', () => expect(run(f('a.js'), onDisk, { ...previous, tool: 'precompressor@0.9.0' })).toBe('compress'));
  test('force → compress', () => expect(run(f('a.js'), onDisk, previous, true)).toBe('compress'));
  test('no previous manifest → compress', () => expect(run(f('a.js'), onDisk, null)).toBe('compress'));
  describe('hold (watch mode: still being written)', () => {
    const hold = (file, disk, prev = previous, { force = false, eligibleFn = eligible } = {}) =>
      decide({ sources: [file], variants: new Map(disk ? [['a.js', disk]] : []) }, prev, { settings, tool: 'precompressor@1.0.0', force, eligible: eligibleFn, holdOut: new Set(['a.js']) })[0];

    test('keeps the previous entry as it is, whatever the stat says', () => {
      expect(hold(f('a.js', 100, 1), onDisk)).toMatchObject({ action: 'hold', prev: prevEntry });
      expect(hold(f('a.js', 5000, 9), onDisk)).toMatchObject({ action: 'hold', prev: prevEntry });
    });
    test('comes before eligibility: a held file that is now empty or excluded is not skipped', () => {
      expect(hold(f('a.js', 0, 9), onDisk)).toMatchObject({ action: 'hold', prev: prevEntry });
      expect(hold(f('a.js', 100, 9), onDisk, previous, { eligibleFn: () => 'excluded' })).toMatchObject({ action: 'hold', prev: prevEntry });
    });
    test('force does not drop the entry: its variants were made with these settings', () => {
      expect(hold(f('a.js', 200, 9), onDisk, previous, { force: true })).toMatchObject({ action: 'hold', prev: prevEntry });
    });
    test('no entry when none describes the variants on disk: new file, other settings or tool, variants not intact', () => {
      const none = (d) => expect(d).toEqual(expect.objectContaining({ action: 'hold', prev: undefined }));
      none(hold(f('a.js'), undefined, null));
      none(hold(f('a.js'), undefined, { ...previous, files: {} }));
      none(hold(f('a.js'), onDisk, { ...previous, settings: { ...settings, gzipLevel: 8 } }));
      none(hold(f('a.js'), onDisk, { ...previous, tool: 'precompressor@0.9.0' }));
      none(hold(f('a.js'), new Map([['br', 20]])));
      expect(hold(f('a.js'), new Map([['br', 20]])).onDisk).toEqual(new Map([['br', 20]]));
    });
    test('only the files in holdOut are held; the others are decided as usual', () => {
      const ds = decide({ sources: [f('a.js', 100, 9), f('b.js')], variants: new Map([['a.js', onDisk]]) }, previous, { settings, tool: 'precompressor@1.0.0', force: false, eligible, holdOut: new Set(['b.js']) });
      expect(ds.map((d) => [d.file.rel, d.action])).toEqual([['a.js', 'verify'], ['b.js', 'hold']]);
    });
  });

  describe('files of the user\'s at variant paths (ctx.blocked)', () => {
    const ctxOf = (blocked) => ({ settings, tool: 'precompressor@1.0.0', force: false, eligible, encodings: ['br', 'gzip'], blocked });
    const brOnly = { ...prevEntry, variants: { br: { size: 20 } } };
    test('a decision carries the encodings it gets no variant of', () => {
      const [d] = decide({ sources: [f('a.js')], variants: new Map() }, null, ctxOf(new Map([['a.js', new Set(['gzip'])]])));
      expect(d).toMatchObject({ action: 'compress', blocked: new Set(['gzip']) });
    });
    test('still blocked: the entry without that variant is fresh', () => {
      const prev = /** @type {any} */ ({ ...previous, files: { 'a.js': brOnly, 'a.js.gz': { size: 7, variants: {} } } });
      const [d] = decide({ sources: [f('a.js', 100, 1)], variants: new Map([['a.js', new Map([['br', 20]])]]) }, prev, ctxOf(new Map([['a.js', new Set(['gzip'])]])));
      expect(d.action).toBe('fresh');
    });
    test('the user\'s file is gone (it was listed as a file): compressed again to get that variant', () => {
      const prev = /** @type {any} */ ({ ...previous, files: { 'a.js': brOnly, 'a.js.gz': { size: 7, variants: {} } } });
      const [d] = decide({ sources: [f('a.js', 100, 1)], variants: new Map([['a.js', new Map([['br', 20]])]]) }, prev, ctxOf(new Map()));
      expect(d.action).toBe('compress');
    });
    test('a variant missing because it was not smaller stays fresh', () => {
      const prev = /** @type {any} */ ({ ...previous, files: { 'a.js': brOnly } });
      const [d] = decide({ sources: [f('a.js', 100, 1)], variants: new Map([['a.js', new Map([['br', 20]])]]) }, prev, ctxOf(new Map()));
      expect(d.action).toBe('fresh');
    });
  });

  test('variantsIntact needs exactly the recorded variants', () => {
    expect(variantsIntact(prevEntry, onDisk)).toBe(true);
    expect(variantsIntact(prevEntry, new Map([...onDisk, ['zstd', 5]]))).toBe(false);
    expect(variantsIntact({ ...prevEntry, variants: {} }, undefined)).toBe(true);
  });
});

describe('encoding parameters', () => {
  test('brotli mode by file type', () => {
    expect(brotliModeFor('a/b.JS')).toBe('text');
    expect(brotliModeFor('f.ttf')).toBe('font');
    expect(brotliModeFor('x.wasm')).toBe('generic');
    expect(extensionOf('noext')).toBe('');
  });
  test('window covers the file, within 16..24 bits', () => {
    expect(brotliWindowBits(0)).toBe(16);
    expect(brotliWindowBits(65_520)).toBe(16);
    expect(brotliWindowBits(65_521)).toBe(17);
    expect(brotliWindowBits(1 << 20)).toBe(21);
    expect(brotliWindowBits(2 ** 30)).toBe(24);
  });
});
