import { hashSpanOf, hashSpansOfBundle } from '../../plugins/hash-names.js';

describe('hashSpanOf: the hash of a name, from the template that made it', () => {
  test.each([
    ['assets/[name]-[hash].js', 'assets/index-Cf-WVkYG.js', 'Cf-WVkYG'],
    ['assets/[name]-[hash].js', 'assets/react-dom-BxE3kq9Z.js', 'BxE3kq9Z'],
    ['_app/immutable/[name].[hash].js', '_app/immutable/nodes/0.Dw-YByUs.js', 'Dw-YByUs'],
    ['_app/immutable/chunks/[hash].js', '_app/immutable/chunks/DhBhzPFF.js', 'DhBhzPFF'],
    ['_astro/[name].[hash][extname]', '_astro/index.g44GkSqW.css', 'g44GkSqW'],
    ['js/[name]~[hash:10].js', 'js/main~abcdefghij.js', 'abcdefghij'],
    ['[name].[hash].[hash].js', 'a.AAAAAAAA.BBBBBBBB.js', 'AAAAAAAA'],
  ])('%s made %s: the hash is %s', (template, fileName, hash) => {
    const span = /** @type {[number, number]} */ (hashSpanOf(template, fileName));
    expect(fileName.slice(fileName.lastIndexOf('/') + 1).slice(...span)).toBe(hash);
  });

  test('no [hash]: null; a name that does not fit, or a hash in a folder name: undefined (the default rule)', () => {
    expect(hashSpanOf('[name].js', 'index.js')).toBeNull();
    expect(hashSpanOf('assets/[name]-[hash].js', 'other/index-Cf-WVkYG.js')).toBeUndefined();
    expect(hashSpanOf('[hash]/[name].js', 'Cf-WVkYG/index.js')).toBeUndefined();
  });
});

test('hashSpansOfBundle: entries, chunks (template functions called with the chunk) and assets', () => {
  const output = {
    entryFileNames: '_app/immutable/[name].[hash].js',
    chunkFileNames: (/** @type {any} */ c) => (c.name === 'manifest' ? '_app/manifest.js' : '_app/immutable/chunks/[hash].js'),
    assetFileNames: () => { throw new Error('needs more'); },
  };
  const bundle = {
    a: { type: 'chunk', isEntry: true, name: 'entry/app', fileName: '_app/immutable/entry/app.DmmngtQC.js' },
    b: { type: 'chunk', isEntry: false, name: 'x', fileName: '_app/immutable/chunks/BmqQDNW-.js' },
    c: { type: 'chunk', isEntry: false, name: 'manifest', fileName: '_app/manifest.js' },
    d: { type: 'asset', name: 'x.css', fileName: 'x.AbCdEfGh.css' },
  };
  expect([...hashSpansOfBundle(output, bundle)]).toEqual([
    ['_app/immutable/entry/app.DmmngtQC.js', [4, 12]],
    ['_app/immutable/chunks/BmqQDNW-.js', [0, 8]],
    ['_app/manifest.js', null],
  ]);
});
