// The encoding registry (lib/encodings.js) and its codecs (lib/compress/encoders/encode.js) are the only
// places that name an encoding, with negotiation: a new encoding is one entry in each. Every entry
// has a codec that round-trips, and no other module compares, switches on or lists a name.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// ESLint's tokenizer (a dependency of the eslint we lint with): strings, regexps and comments apart.
import * as espree from 'espree';
import {
  DEFAULT_ENCODINGS, DELTA_ENCODINGS, DELTA_NAMES, ENCODINGS, ENCODING_NAMES, encodingSpec, isDeltaEncoding, isEncoding,
  suffixEncoding, tokenOf, variantPath,
} from '../lib/encodings.js';
import { codecOf, deltaCodecOf, decodeBufferSync, encodeBuffer, loadEncoder, zlibOptions } from '../lib/compress/encoders/encode.js';
import { deltaEncoders, encodeDelta, verifyDelta } from '../lib/compress/dictionaries/delta-encode.js';
import { OPTIONS, normalizeOptions } from '../lib/options.js';
import { CLI_FLAGS } from '../lib/cli/options.js';
import crypto from 'node:crypto';

const root = fileURLToPath(new URL('../', import.meta.url));
const NAMES = [...ENCODING_NAMES, ...DELTA_NAMES];

/** The modules that may name an encoding: the registry, the codecs, and negotiation. */
const ALLOWED = new Set(['lib/encodings.js', 'lib/compress/encoders/encode.js', 'lib/serve/http/negotiate.js', 'lib/serve/site/dictionary.js']);

/** Where `source` names an encoding outside a prose comment: [line, what] for each. */
function namings(source) {
  const names = new Set(NAMES);
  // A regexp group of encoding names only, such as (?:dcb|dcz).
  const listsNames = (pattern) => [...pattern.matchAll(/\((?:\?:)?([^()]*)\)/g)]
    .some((m) => m[1].split('|').every((alt) => names.has(alt)));
  const typed = new RegExp(`@(?:type|param|returns|typedef|property)\\b.*(['"\`])(?:${NAMES.join('|')})\\1`);
  const found = [];
  const tokens = espree.tokenize(source, { ecmaVersion: 'latest', sourceType: 'module', comment: true, loc: true });
  for (const t of tokens) {
    const line = t.loc.start.line;
    if ((t.type === 'String' || t.type === 'Template') && names.has(t.value.slice(1, -1))) found.push([line, t.value]);
    if (t.type === 'RegularExpression' && listsNames(t.regex.pattern)) found.push([line, t.value]);
  }
  for (const c of tokens.comments) {
    c.value.split('\n').forEach((text, i) => {
      if (typed.test(text)) found.push([c.loc.start.line + i, text.trim()]);
    });
  }
  return found;
}

function jsFiles(dir) {
  return fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.js'))
    .map((d) => path.relative(root, path.join(d.parentPath, d.name)).split(path.sep).join('/'));
}

test('the scan finds names in comparisons, switches, lists, regexps and JSDoc types, not in prose', () => {
  const source = [
    "if (encoding === 'br') x();",
    'switch (e) { case "zstd": break; }',
    "const list = ['dcb', 'dcz'];",
    'const t = `gzip`;',
    'const re = /\\.(?:dcb|dcz)$/;',
    "/** @param {'br' | 'gzip'} e */",
    '// gzip is smaller here than br, see zstd',
    'const other = /compress|gzip|brotli/i;',
    "const message = 'zstd needs Node 22.15';",
  ].join('\n');
  expect(namings(source).map(([line]) => line)).toEqual([1, 2, 3, 3, 4, 5, 6]);
});

test('no module but the registry, the codecs and negotiation names an encoding', () => {
  const offenders = [];
  for (const file of [...jsFiles('lib'), ...jsFiles('plugins'), ...jsFiles('bin')]) {
    if (ALLOWED.has(file)) continue;
    for (const [line, what] of namings(fs.readFileSync(path.join(root, file), 'utf8'))) offenders.push(`${file}:${line} ${what}`);
  }
  expect(offenders).toEqual([]);
});

test('the encoding types are written once, in lib/types.d.ts', () => {
  const union = (names) => new RegExp(names.map((n) => `'${n}'`).join('\\s*\\|\\s*'));
  const dts = [...fs.readdirSync(path.join(root, 'lib'), { recursive: true }), ...fs.readdirSync(path.join(root, 'plugins'))]
    .filter((f) => String(f).endsWith('.d.ts'));
  let variants = 0;
  let deltas = 0;
  for (const f of dts) {
    const p = fs.existsSync(path.join(root, 'lib', f)) ? path.join(root, 'lib', f) : path.join(root, 'plugins', f);
    const text = fs.readFileSync(p, 'utf8');
    variants += text.match(new RegExp(union(['br', 'gzip', 'zstd']).source, 'g'))?.length ?? 0;
    deltas += text.match(new RegExp(union(['dcb', 'dcz']).source, 'g'))?.length ?? 0;
  }
  expect([variants, deltas]).toEqual([1, 1]);
});

test('each entry: a suffix of its own, its HTTP token, and a codec', () => {
  expect(ENCODING_NAMES).toEqual(['br', 'zstd', 'gzip']);
  expect(DELTA_NAMES).toEqual(['dcb', 'dcz']);
  expect(DEFAULT_ENCODINGS).toEqual(['br', 'gzip']);
  const all = [...ENCODINGS, ...DELTA_ENCODINGS];
  expect(new Set(all.map((e) => e.suffix)).size).toBe(all.length);
  for (const e of ENCODINGS) {
    expect(isEncoding(e.name) && !isDeltaEncoding(e.name)).toBe(true);
    expect(encodingSpec(e.name)).toBe(e);
    expect(e.token).toMatch(/^[a-z0-9-]+$/);
    expect(tokenOf(e.name)).toBe(e.token);
    expect(suffixEncoding(variantPath('a/b.js', e.name))).toBe(e.name);
    expect(typeof codecOf(e.name).encodeSync).toBe('function');
  }
  for (const e of DELTA_ENCODINGS) {
    expect(isDeltaEncoding(e.name) && !isEncoding(e.name)).toBe(true);
    expect(deltaCodecOf(e.name).magic.length).toBeGreaterThan(0);
  }
  expect(() => codecOf('deflate')).toThrow('Unknown encoding deflate');
});

test("the options and the CLI come from the registry: each encoding's level, and a flag for each opt-in one", () => {
  for (const { name, byDefault, level } of ENCODINGS) {
    expect(OPTIONS[level.option].default).toBe(level.default);
    expect(() => normalizeOptions('.', { [level.option]: level.max + 1 }))
      .toThrow(`Expected options.${level.option} to be an integer from ${level.min} to ${level.max}, got ${level.max + 1}`);
    expect(normalizeOptions('.', { [level.option]: level.min })[level.option]).toBe(level.min);
    expect(CLI_FLAGS.some((f) => f.flag === name)).toBe(!byDefault);
  }
});

test('every codec this Node has round-trips its own output, byte for byte', async () => {
  const source = Buffer.from('<p>precompressor registry round trip</p>\n'.repeat(200) + crypto.randomBytes(64).toString('hex'));
  for (const name of ENCODING_NAMES) {
    const options = zlibOptions(name, { size: source.length, mode: 'text', brotliQuality: 5, gzipLevel: 6, zstdLevel: 3 });
    try {
      await loadEncoder(name, options);
    } catch (err) {
      console.warn(`skipped ${name}: ${err.message}`);
      continue;
    }
    const encoded = await encodeBuffer(source, name, options);
    expect(encoded.length).toBeLessThan(source.length);
    expect(decodeBufferSync(encoded, name, source.length).equals(source)).toBe(true);
  }
  const dict = Buffer.concat([source.subarray(0, 4000), Buffer.from('old version')]);
  const digest = crypto.createHash('sha256').update(dict).digest();
  for (const name of deltaEncoders()) {
    const delta = /** @type {Buffer} */ (await encodeDelta(name, source, dict, digest));
    expect(verifyDelta(name, delta, dict, digest, source)).toBe(true);
    expect(verifyDelta(name, delta, dict, digest, Buffer.concat([source, Buffer.from('!')]))).toBe(false);
  }
});
