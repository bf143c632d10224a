import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { familyOf, escapeUrlPattern, dictionaryHashOf, deltaEncoders, encodeDelta, verifyDelta, dczMaxWindow, dczWindowLog } from '../../lib/compress/dictionaries/delta-encode.js';
import { decodeDelta } from '../helpers/delta.js';
import { contentHash, deltaPath, deltaStem } from '../../lib/manifest/manifest.js';

describe('familyOf: versions of one asset by the name with its hash taken out', () => {
  test.each([
    // Vite / Rollup: [name]-[hash].ext, 8 base64url characters (which may hold - and _)
    ['assets/index-BxE3kq9Z.js', 'assets/index-*.js', 'index-*.js', 'script'],
    ['assets/react-dom-BxE3kq9Z.js', 'assets/react-dom-*.js', 'react-dom-*.js', 'script'],
    ['assets/vendor-C_8x-a1b.js', 'assets/vendor-*.js', 'vendor-*.js', 'script'],
    ['assets/index-Dq3hV7Ya.css', 'assets/index-*.css', 'index-*.css', 'style'],
    // esbuild: chunk-[hash] in base32 capitals
    ['chunk-ABCD1234.js', 'chunk-*.js', 'chunk-*.js', 'script'],
    ['out/main-QWERTYUI.js', 'out/main-*.js', 'main-*.js', 'script'],
    // webpack / Parcel: [name].[contenthash].ext, also [name].[hash].chunk.ext
    ['static/js/main.3f2a1b9c.js', 'static/js/main.*.js', 'main.*.js', 'script'],
    ['static/js/787.3f2a1b9c4d5e6f708192.chunk.js', 'static/js/787.*.chunk.js', '787.*.chunk.js', 'script'],
    ['app.3f2a1b9c4d5e6f70.wasm', 'app.*.wasm', 'app.*.wasm', null],
    // [name]-[contenthash] in hex of any length from 8
    ['app-3f2a1b9c4d5e6f70.js', 'app-*.js', 'app-*.js', 'script'],
    // Rollup's 8 base64url characters need no digit (one random hash in five has none)
    ['assets/index-DhBhzPFF.js', 'assets/index-*.js', 'index-*.js', 'script'],
    ['assets/lang-Cf-WVkYG.js', 'assets/lang-*.js', 'lang-*.js', 'script'],
    // Astro `_astro/[name].[hash].js`, SvelteKit `[name].[hash].js` (real names of theirs)
    ['_astro/ClientRouter.astro_astro_type_script_index_0_lang.Cf-WVkYG.js', '_astro/ClientRouter.astro_astro_type_script_index_0_lang.*.js', 'ClientRouter.astro_astro_type_script_index_0_lang.*.js', 'script'],
    ['_astro/index.g44GkSqW.css', '_astro/index.*.css', 'index.*.css', 'style'],
    ['_app/immutable/nodes/0.Dw-YByUs.js', '_app/immutable/nodes/0.*.js', '0.*.js', 'script'],
    ['_app/immutable/nodes/1.Bn8Ez4_R.js', '_app/immutable/nodes/1.*.js', '1.*.js', 'script'],
    ['_app/immutable/entry/app.DmmngtQC.js', '_app/immutable/entry/app.*.js', 'app.*.js', 'script'],
    // Turbopack's runtime chunk: a name, then its 13-character hash (which may hold a `-`)
    ['_next/static/chunks/turbopack-2u1d16houkiyo.js', '_next/static/chunks/turbopack-*.js', 'turbopack-*.js', 'script'],
    ['_next/static/chunks/turbopack-2u1d-6houkiyo.js', '_next/static/chunks/turbopack-*.js', 'turbopack-*.js', 'script'],
  ])('%s → family %s, match %s', (rel, key, match, dest) => {
    expect(familyOf(rel)).toEqual({ key, match, dest, hashed: true });
  });

  test.each([
    ['app.js', 'script'], ['index.html', 'document'], ['assets/index-settings.js', 'script'], ['Dashboard.js', 'script'],
    ['jquery.min.js', 'script'], ['data/config.json', null], ['lodash.debounce.js', 'script'],
    // words, not hashes: lowercase or Capitalised, any length; no digit and not 8 characters
    ['jquery.validate.js', 'script'], ['index-Settings.js', 'script'], ['app.Settings.js', 'script'],
    ['react-dom.production.min.js', 'script'], ['app.MainWindow.js', 'script'], ['Settings.js', 'script'],
    // words and numbers, not hashes: a version, a date, a chapter (served immutable, a new build's would go unseen)
    ['jquery-3-7-1.js', 'script'], ['report-2024-11-28.js', 'script'], ['2024-roadmaps.js', 'script'],
    ['Chapter_12_part_2.js', 'script'],
    // a page: its name is its address, never a content hash, whatever it looks like
    ['chapter-10.html', 'document'], ['docs/Page-1a2b3c4d5e6f7a8b.html', 'document'], ['3f2a1b9c4d5e6f70.htm', 'document'],
  ])('%s has no hash: a family of one path across builds', (rel, dest) => {
    const base = rel.slice(rel.lastIndexOf('/') + 1);
    expect(familyOf(rel)).toEqual({ key: rel, match: base, dest, hashed: false });
  });

  test.each([
    'assets/BxE3kq9Z.js', '3f2a1b9c4d5e6f70.js', 'assets/4a5B6c7D.css', 'a:b-BxE3kq9Z.js', 'a:b.js',
    // SvelteKit's chunks/[hash].js, with and without a digit, and with a `-`
    '_app/immutable/chunks/DhBhzPFF.js', '_app/immutable/chunks/Bjy-W4x2.js', '_app/immutable/chunks/BmqQDNW-.js',
    // Turbopack's chunks are a 13-character hash alone, whose `-` is not a name's end (seen in Next 16's builds)
    '_next/static/chunks/08r9a_yc1u026.js', '_next/static/chunks/2i-gazab46cne.js', '_next/static/chunks/42r3-hdwa29kt.js',
    '_next/static/chunks/0a1b-2c3d4e5f.js', '12345678.js', 'static/js/1234-5678.js',
  ])('%s is only a hash, or has a colon: no family', (rel) => {
    expect(familyOf(rel)).toBeNull();
  });

  test('the same family for two builds, another for another name or folder', () => {
    expect(familyOf('assets/index-AAAA1111.js')?.key).toBe(familyOf('assets/index-BbBb2222.js')?.key);
    expect(familyOf('assets/index-AAAA1111.js')?.key).not.toBe(familyOf('assets/main-AAAA1111.js')?.key);
    expect(familyOf('a/index-AAAA1111.js')?.key).not.toBe(familyOf('b/index-AAAA1111.js')?.key);
  });

  test('hashPattern: the named group `hash` of the user\'s pattern is the hash', () => {
    const hashPattern = /_(?<hash>[a-z]{6})\.js$/;
    expect(familyOf('lib/app_abcdef.js', hashPattern)).toEqual({ key: 'lib/app_*.js', match: 'app_*.js', dest: 'script', hashed: true });
    expect(familyOf('lib/app.js', hashPattern)).toEqual({ key: 'lib/app.js', match: 'app.js', dest: 'script', hashed: false });
    expect(familyOf('lib/_abcdef.js', hashPattern)).toBeNull();
  });

  test('hashPattern as a function of the path (what the Vite plugin passes): null is no hash, undefined the default rule', () => {
    const spans = new Map([['js/main~abcdefgh.js', /** @type {[number, number]} */ ([5, 13])], ['js/plain.js', null]]);
    const fn = (/** @type {string} */ rel) => spans.get(rel);
    expect(familyOf('js/main~abcdefgh.js', fn)).toEqual({ key: 'js/main~*.js', match: 'main~*.js', dest: 'script', hashed: true });
    expect(familyOf('js/plain.js', fn)).toEqual({ key: 'js/plain.js', match: 'plain.js', dest: 'script', hashed: false });
    expect(familyOf('public/app-BxE3kq9Z.js', fn)?.key).toBe('public/app-*.js');
  });

  test('the families of real hashes stay the same over consecutive builds: random 8-character base64url hashes are recognised, the rare word-shaped one aside', () => {
    let missed = 0;
    for (let i = 0; i < 20000; i++) {
      const hash = crypto.randomBytes(6).toString('base64url');
      if (familyOf(`_astro/index.${hash}.js`)?.key !== '_astro/index.*.js') missed++;
      expect(familyOf(`assets/index-${hash}.js`)?.key === 'assets/index-*.js').toBe(familyOf(`_astro/index.${hash}.js`)?.key === '_astro/index.*.js');
    }
    expect(missed / 20000).toBeLessThan(0.005); // all-lowercase or Capitalised hashes: about 0.2 %
  });

  test('every Turbopack chunk name is only a hash, every runtime chunk of the family turbopack-*.js: a `-` inside the hash splits no name off', () => {
    const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz-_';
    const wrong = [];
    for (let i = 0; i < 20000; i++) {
      // the shape of Next 16's names: a leading digit (a 64-bit value in 13 such characters), then any of them
      const hash = String(i % 5) + Array.from(crypto.randomBytes(12), (b) => alphabet[b % alphabet.length]).join('');
      if (/[a-z]/.test(hash) && /^(?:[a-z]+|[0-9]+)(?:[-_](?:[a-z]+|[0-9]+))*$/.test(hash)) continue; // words and numbers: never a hash
      if (familyOf(`_next/static/chunks/${hash}.js`) !== null) wrong.push(hash);
      if (familyOf(`_next/static/chunks/turbopack-${hash}.js`)?.key !== '_next/static/chunks/turbopack-*.js') wrong.push(`turbopack-${hash}`);
    }
    expect(wrong).toEqual([]);
  });

  test('special characters in a hashed name are escaped in the pattern, not in the key', () => {
    expect(familyOf('assets/a(1)+b-BxE3kq9Z.js')).toEqual({ key: 'assets/a(1)+b-*.js', match: 'a\\(1\\)\\+b-*.js', dest: 'script', hashed: true });
  });
});

describe('escapeUrlPattern', () => {
  test.each([
    ['plain-name.js', 'plain-name.js'],
    ['a(1).js', 'a\\(1\\).js'],
    ['x*y+z?.js', 'x\\*y\\+z%3F.js'],
    ['{a}:b.js', '%7Ba%7D\\:b.js'],
    ['a b#c.js', 'a%20b%23c.js'],
    ['back\\slash.js', 'back%5Cslash.js'],
    ['é.js', '%C3%A9.js'],
    ['a@b$c&d,e;f=g.js', 'a@b$c&d,e;f=g.js'],
  ])('%s → %s', (text, escaped) => {
    expect(escapeUrlPattern(text)).toBe(escaped);
  });

  const URLPatternCtor = /** @type {any} */ (globalThis).URLPattern;
  (URLPatternCtor ? test : test.skip)('patterns match the siblings of the file they were made from, as a browser resolves them (URLPattern)', () => {
    const cases = [
      ['assets/index-BxE3kq9Z.js', 'assets/index-Cz9yX1ab.js', ['assets/main-Cz9yX1ab.js', 'other/index-Cz9yX1ab.js']],
      ['assets/a(1)+b-BxE3kq9Z.js', 'assets/a(1)+b-Cz9yX1ab.js', ['assets/a1b-Cz9yX1ab.js', 'assets/a(1)b-Cz9yX1ab.js']],
      ['x y/é{1}-BxE3kq9Z.js', 'x y/é{1}-Cz9yX1ab.js', ['x y/e{1}-Cz9yX1ab.js']],
      ['app.js', 'app.js', ['app2.js', 'xapp.js']],
    ];
    for (const [from, sibling, others] of cases) {
      const base = new URL(from, 'http://localhost:5000/site/').href;
      const p = new URLPatternCtor(/** @type {any} */ (familyOf(from)).match, base);
      expect(p.test(new URL(sibling, 'http://localhost:5000/site/').href)).toBe(true);
      for (const o of others) expect(p.test(new URL(o, 'http://localhost:5000/site/').href)).toBe(false);
    }
  });
});

test('delta paths carry 16 hex digits of the dictionary hash; deltaStem inverts them', () => {
  const hash = crypto.createHash('sha256').update('old').digest('base64');
  const p = deltaPath('assets/index-BxE3kq9Z.js', hash, 'dcz');
  expect(p).toBe(`assets/index-BxE3kq9Z.js.${Buffer.from(hash, 'base64').toString('hex').slice(0, 16)}.dcz`);
  expect(deltaStem(p)).toBe('assets/index-BxE3kq9Z.js');
  expect(deltaStem('assets/index.js.dcz')).toBeNull();
  expect(deltaStem('a.js.0123456789ABCDEF.dcz')).toBeNull();
  expect(deltaStem('a.js.0123456789abcdef.br')).toBeNull();
});

test('dictionaryHashOf turns the manifest hash into the base64 that Available-Dictionary carries', () => {
  const buf = Buffer.from('some dictionary');
  expect(dictionaryHashOf(contentHash(buf))).toBe(crypto.createHash('sha256').update(buf).digest('base64'));
});

test('dcz windows stay within what RFC 9842 clients must accept', () => {
  expect(dczMaxWindow(1000)).toBe(8 * 1024 * 1024);
  expect(dczMaxWindow(64 * 1024 * 1024)).toBe(80 * 1024 * 1024);
  expect(dczMaxWindow(512 * 1024 * 1024)).toBe(128 * 1024 * 1024);
  expect(2 ** dczWindowLog(100_000, 100_000)).toBeGreaterThanOrEqual(200_000);
  expect(2 ** dczWindowLog(10e6, 10e6)).toBeLessThanOrEqual(dczMaxWindow(10e6));
});

describe('encoders', () => {
  const old = Buffer.from(Array.from({ length: 400 }, (_, i) => `export function f${i}(a) { return a * ${i} + "${'x'.repeat(i % 17)}"; }\n`).join(''));
  const next = Buffer.from(old.toString().replace('f200(a) { return a * 200', 'f200(a) { return a * 201') + 'export const added = 1;\n');
  const digest = crypto.createHash('sha256').update(old).digest();
  const available = deltaEncoders();

  test('the probe finds what this Node can do (zstd with a dictionary needs zlib.zstdCompress)', () => {
    if (typeof (/** @type {any} */ (zlib)).zstdCompress !== 'function') expect(available).not.toContain('dcz');
    expect([...available].sort()).toEqual([...available].sort().filter((e) => e === 'dcb' || e === 'dcz'));
  });

  test.each(['dcb', 'dcz'])('%s: header, decodes with the dictionary only, far smaller than Brotli 11 alone', async (enc) => {
    if (!available.includes(/** @type {any} */ (enc))) return; // this Node cannot make it (see the probe test)
    const delta = /** @type {Buffer} */ (await encodeDelta(/** @type {any} */ (enc), next, old, digest));
    const magic = enc === 'dcb' ? 'ff444342' : '5e2a4d1820000000';
    expect(delta.subarray(0, magic.length / 2).toString('hex')).toBe(magic);
    expect(delta.subarray(magic.length / 2, magic.length / 2 + 32).equals(digest)).toBe(true);
    expect(verifyDelta(/** @type {any} */ (enc), delta, old, digest, next)).toBe(true);
    expect(decodeDelta(/** @type {any} */ (enc), delta, old).equals(next)).toBe(true);
    expect(delta.length * 5).toBeLessThan(zlib.brotliCompressSync(next).length);
    // another dictionary, a flipped byte, another expected content: never verified
    const other = Buffer.from(old);
    other[100] ^= 1;
    expect(verifyDelta(/** @type {any} */ (enc), delta, other, crypto.createHash('sha256').update(other).digest(), next)).toBe(false);
    expect(verifyDelta(/** @type {any} */ (enc), delta, other, digest, next)).toBe(false);
    const bad = Buffer.from(delta);
    bad[bad.length - 3] ^= 0xff;
    expect(verifyDelta(/** @type {any} */ (enc), bad, old, digest, next)).toBe(false);
    expect(verifyDelta(/** @type {any} */ (enc), delta, old, digest, Buffer.concat([next, Buffer.from('x')]))).toBe(false);
  });

  test('a dictionary that starts with the zstd dictionary magic gets no dcz (it would not be read as raw content)', async () => {
    if (!available.includes('dcz')) return;
    const dict = Buffer.concat([Buffer.from([0x37, 0xa4, 0x30, 0xec]), old]);
    expect(await encodeDelta('dcz', next, dict, crypto.createHash('sha256').update(dict).digest())).toBeNull();
  });
});
