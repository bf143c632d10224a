import { hashSpansOfAssets } from '../../plugins/webpack.js';
import { ownOutputs } from '../../plugins/webpack-clean.js';

test('the hash span of each emitted file comes from its asset info, whatever the name looks like', () => {
  const spans = hashSpansOfAssets([
    { name: 'main.d8b477a66b9453c86d60.js', info: { contenthash: 'd8b477a66b9453c86d60' } },
    { name: 'js/app-settings.5d6c5e71.js', info: { contenthash: ['5d6c5e71'], chunkhash: [], fullhash: [] } },
    { name: 'static/77de9feec4a647a04921.js', info: { chunkhash: '77de9feec4a647a04921' } },
    { name: 'vendor.js?abcdef12', info: { contenthash: 'abcdef12' } }, // the hash only in the query
    { name: 'abcdef12/page.js', info: { fullhash: 'abcdef12' } }, // only in a folder: the default rule
    { name: 'main.js', info: {} },
    { name: 'settings.js', info: { contenthash: [] } },
  ]);
  expect(Object.fromEntries(spans)).toEqual({
    'main.d8b477a66b9453c86d60.js': [5, 25],
    'js/app-settings.5d6c5e71.js': [13, 21],
    'static/77de9feec4a647a04921.js': [0, 20],
    'vendor.js': null,
    'main.js': null,
    'settings.js': null,
  });
});

test("output.clean keeps exactly the manifest's own outputs: variants, deltas, the site dictionary and the manifest", () => {
  const manifest = /** @type {any} */ ({
    files: {
      'main.1a2b3c4d.js': { variants: { br: { size: 1 }, gzip: { size: 2 } }, deltas: { [Buffer.alloc(32, 1).toString('base64')]: { dcz: { size: 3, hash: 'x' } } } },
      'logo.png': { variants: {} },
      'precompressor-dictionary.0123456789abcdef.dict': { variants: { br: { size: 4 } } },
    },
    siteDictionary: { path: 'precompressor-dictionary.0123456789abcdef.dict', hash: 'sha256-x' },
  });
  expect([...ownOutputs(manifest, 'precompressor-manifest.json')].sort()).toEqual([
    'main.1a2b3c4d.js.0101010101010101.dcz', 'main.1a2b3c4d.js.br', 'main.1a2b3c4d.js.gz',
    'precompressor-dictionary.0123456789abcdef.dict', 'precompressor-dictionary.0123456789abcdef.dict.br',
    'precompressor-manifest.json',
  ]);
});
