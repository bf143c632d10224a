import { claimsOf, recordedOurs, blockedEncodings, userFileWarnings, userFileMessage, recordedVariants, lookAlikes } from '../../lib/compress/plan/ownership.js';

// The pure ownership decision: whose is a file at one of precompressor's output paths?

const f = (rel, size = 100, mtimeMs = 1000) => ({ rel, size, mtimeMs });
const at = new Date(5000).toISOString();
const previous = /** @type {any} */ ({
  generatedAt: at,
  files: {
    'a.js': { size: 900, variants: { br: { size: 100 }, gzip: { size: 120 } } },
    'b.js': {
      size: 900, variants: {}, dictionary: { hash: 'x' },
      deltas: { '3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=': { dcz: { size: 40, hash: 'h' } } },
    },
  },
});
const deltaRel = `b.js.${Buffer.from('3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', 'base64').toString('hex').slice(0, 16)}.dcz`;
const all = () => true;

describe('recordedOurs', () => {
  test('listed as the variant, same size, not newer than the manifest → ours', () => {
    expect(recordedOurs(f('a.js.br', 100), previous)).toBe(true);
    expect(recordedOurs(f('a.js.gz', 120, 5000), previous)).toBe(true);
  });
  test('another size, newer than the manifest, not listed, or no manifest → not known to be ours', () => {
    expect(recordedOurs(f('a.js.br', 101), previous)).toBe(false);
    expect(recordedOurs(f('a.js.br', 100, 5002), previous)).toBe(false);
    expect(recordedOurs(f('a.js.zst', 100), previous)).toBe(false);
    expect(recordedOurs(f('c.js.br', 100), previous)).toBe(false);
    expect(recordedOurs(f('a.js.br', 100), null)).toBe(false);
  });
  test('deploy deltas: listed with their size', () => {
    expect(recordedOurs(f(deltaRel, 40), previous)).toBe(true);
    expect(recordedOurs(f(deltaRel, 41), previous)).toBe(false);
    expect(recordedOurs(f('b.js.0000000000000000.dcz', 40), previous)).toBe(false);
  });
  test('a manifest without a date: the size decides', () => {
    expect(recordedOurs(f('a.js.br', 100, 9e12), { ...previous, generatedAt: undefined })).toBe(true);
  });
});

describe('claimsOf', () => {
  test('recorded → ours; beside its file and adoptable → check; beside its file otherwise → user\'s; alone → no claim', () => {
    const files = [f('a.js', 900), f('a.js.br', 100), f('a.js.gz', 999), f('data.csv'), f('data.csv.gz', 5000), f('lone.txt.gz'), f('m.json'), f('m.json.br')];
    const c = claimsOf(files, 'm.json', previous, { adoptable: (stem) => stem.rel === 'a.js' });
    expect([...c.ours]).toEqual(['a.js.br']);
    expect(c.check).toEqual([{ rel: 'a.js.gz', stem: 'a.js', encoding: 'gzip', size: 999 }]);
    expect([...c.user]).toEqual(['data.csv.gz']);
  });
  test('a recorded variant whose file is gone is ours (an orphan to remove)', () => {
    expect([...claimsOf([f('a.js.br', 100)], null, previous, { adoptable: all }).ours]).toEqual(['a.js.br']);
  });
  test('a delta-named file beside its file is ours only if recorded, never checked', () => {
    const c = claimsOf([f('b.js'), f(deltaRel, 40), f('b.js.0123456789abcdef.dcb', 40)], null, previous, { adoptable: all });
    expect([...c.ours]).toEqual([deltaRel]);
    expect([...c.user]).toEqual(['b.js.0123456789abcdef.dcb']);
    expect(c.check).toEqual([]);
  });
});

test('blockedEncodings: per file, the encodings a file of the user\'s stands in for (deltas block none)', () => {
  const b = blockedEncodings(['a.js.gz', 'a.js.br', 'data.csv.zst', 'b.js.0123456789abcdef.dcb']);
  expect(b).toEqual(new Map([['a.js', new Set(['gzip', 'br'])], ['data.csv', new Set(['zstd'])]]));
});

test('userFileWarnings: one per blocking file with path, what happens and how to resolve it; none for skipped or held files', () => {
  const decisions = [
    { action: 'compress', file: { rel: 'downloads/data.csv' }, blocked: new Set(['gzip']) },
    { action: 'fresh', file: { rel: 'x.js' } },
    { action: 'skip', file: { rel: 'y.js' }, blocked: new Set(['gzip']) },
    { action: 'hold', file: { rel: 'z.js' }, blocked: new Set(['br']) },
  ];
  expect(userFileWarnings(decisions)).toEqual([{
    path: 'downloads/data.csv.gz',
    message: 'not written by precompressor: kept as your own file and served as itself; downloads/data.csv gets no .gz variant. ' +
      'To resolve: rename or remove downloads/data.csv.gz, or exclude downloads/data.csv',
  }]);
  expect(userFileMessage('a.js.x.dcz', 'a.js', 'dcz delta')).toMatch(/^not written by precompressor: .* a\.js gets no dcz delta\. To resolve: rename or remove a\.js\.x\.dcz, or exclude a\.js$/);
});

describe('variants we made of another content (#27, item 7)', () => {
  test('recordedVariants: per encoding and size, the contents they were made of', () => {
    const m = { schema: 3, files: {
      'sub/x.txt': { size: 6000, hash: 'sha256-X', variants: { br: { size: 26 }, gzip: { size: 62 } } },
      'y.txt': { size: 10, hash: 'sha256-Y', variants: {} },
    } };
    const r = recordedVariants(/** @type {any} */ (m));
    expect([...r.keys()].sort()).toEqual(['br 26', 'gzip 62']);
    expect(r.get('br 26')).toEqual(new Map([['sha256-X', 6000]]));
    expect(recordedVariants(null).size).toBe(0);
  });
  test('lookAlikes: two or more variants of one file decoding to one other content; a lone one is not', () => {
    const got = lookAlikes([
      { rel: 'a/x.txt.gz', stem: 'a/x.txt', hash: 'h1' }, { rel: 'a/x.txt.br', stem: 'a/x.txt', hash: 'h1' },
      { rel: 'b.csv.gz', stem: 'b.csv', hash: 'h2' },
      { rel: 'c.js.gz', stem: 'c.js', hash: 'h3' }, { rel: 'c.js.br', stem: 'c.js', hash: 'h4' },
    ]);
    expect(got).toEqual(new Map([['a/x.txt.gz', ['a/x.txt.br', 'a/x.txt.gz']], ['a/x.txt.br', ['a/x.txt.br', 'a/x.txt.gz']]]));
  });
});
