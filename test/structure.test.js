import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as espree from 'espree';

// Sizes the house keeps (#26): no class over 150 lines counting every line (functions: ESLint's
// max-lines-per-function), and prose comments, JSDoc tags aside, a bounded share of lib/'s lines.
const root = fileURLToPath(new URL('../', import.meta.url));
const CLASS_MAX = 150;
// #26: prose under 10 % of lib/'s lines (fastify and p-limit are at about 10 %).
const PROSE_MAX = 0.10;

/** @param {string} dir */
function jsFiles(dir) {
  return fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.js'))
    .map((d) => path.join(d.parentPath, d.name));
}

/** @param {string} file */
function parse(file) {
  const text = fs.readFileSync(file, 'utf8');
  const ast = espree.parse(text, { ecmaVersion: 'latest', sourceType: 'module', loc: true, comment: true });
  return { text, ast };
}

/** Every class node under `node`. */
function classes(node, out = []) {
  if (!node || typeof node.type !== 'string') return out;
  if (node.type === 'ClassDeclaration' || node.type === 'ClassExpression') out.push(node);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc' || key === 'range') continue;
    if (Array.isArray(value)) value.forEach((v) => classes(v, out));
    else if (value && typeof value === 'object') classes(value, out);
  }
  return out;
}

/**
 * Lines of prose in one comment: a line comment is prose unless it is a directive; in a block, the
 * lines from its first JSDoc tag on are tags, and lines holding only the delimiters are neither.
 * @param {{ type: string, value: string }} comment
 */
export function proseLines(comment) {
  if (comment.type === 'Line') return /^\s*(eslint|@ts-|#)/.test(comment.value) ? 0 : 1;
  let n = 0;
  for (const raw of comment.value.split('\n')) {
    const line = raw.replace(/^\s*\*?/, '').trim();
    if (line.startsWith('@')) break;
    if (line !== '' && line !== '*') n++;
  }
  return n;
}

const files = ['lib', 'plugins', 'bin'].flatMap(jsFiles);

test('no class is over 150 lines', () => {
  const over = files.flatMap((file) => classes(parse(file).ast)
    .map((c) => ({ where: `${path.relative(root, file)}:${c.loc.start.line}`, lines: c.loc.end.line - c.loc.start.line + 1 }))
    .filter((c) => c.lines > CLASS_MAX));
  expect(over).toEqual([]);
});

test(`prose comments are under ${(PROSE_MAX * 100).toFixed(0)} % of lib/'s lines`, () => {
  let lines = 0;
  let prose = 0;
  for (const file of jsFiles('lib')) {
    const { text, ast } = parse(file);
    lines += text.split('\n').length;
    prose += ast.comments.reduce((sum, c) => sum + proseLines(c), 0);
  }
  console.log(`prose comments: ${prose} of ${lines} lines (${(prose / lines * 100).toFixed(1)} %)`);
  expect(prose / lines).toBeLessThan(PROSE_MAX);
});

test('proseLines counts prose, not tags or delimiters', () => {
  expect(proseLines({ type: 'Line', value: ' why this is so' })).toBe(1);
  expect(proseLines({ type: 'Line', value: ' eslint-disable-next-line no-await-in-loop' })).toBe(0);
  expect(proseLines({ type: 'Block', value: '*\n * One line of prose.\n * Two.\n *\n * @param {string} x the thing\n *   more\n ' })).toBe(2);
  expect(proseLines({ type: 'Block', value: '* @type {number} ' })).toBe(0);
});
