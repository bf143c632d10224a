// The layer rule of ARCHITECTURE.md, checked on the import specifiers of every module:
// - contract files (lib/*.js but index.js) import only each other;
// - a folder (lib/compress/, lib/serve/, any new one) imports only the contract and itself;
// - the top (lib/cli/, lib/watch/, lib/index.js, plugins/) may also import compress/ and serve/ (all but
//   lib/watch/ also servers/, the generated server configurations),
//   lib/cli/ and lib/index.js also lib/watch/; bin/ imports only lib/cli/; nothing imports lib/index.js;
// - no cycles;
// - rooms (#26): a wing made of rooms (lib/compress/, lib/serve/) and each of its rooms (a sub-folder) has
//   one door, its index.js: a module outside a folder with a door enters it only through that door; a
//   module never imports a folder above its own (the contract floor aside: lib/*.js is the bottom), so a
//   room does not use its wing's door; and the folders do not import each other in a cycle.
// Every specifier counts: static imports and re-exports, dynamic import('…'), JSDoc import('…')
// types (a type the contract borrows from a folder couples it to that folder just the same) and
// worker modules named with new URL('./x.js', import.meta.url).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as espree from 'espree';

const root = fileURLToPath(new URL('../', import.meta.url));

/** POSIX paths (relative to the repository) of the .js files under `dir`. */
function jsFiles(dir) {
  return fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.js'))
    .map((d) => path.relative(root, path.join(d.parentPath, d.name)).split(path.sep).join('/'))
    .sort();
}

const PATTERNS = [
  /^[ \t]*(?:import|export)\s[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/gm, // import … from 'x', export … from 'x'
  /^[ \t]*import\s*(['"])([^'"\n]+)\1/gm, // import 'x'
  /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g, // import('x'): dynamic, or a JSDoc type
  /\bnew\s+URL\(\s*(['"])([^'"\n]+\.js)\1\s*,\s*import\.meta\.url\s*\)/g, // a worker module
];

/** Every module specifier written in `source`, in the order of the patterns. */
function specifiersOf(source) {
  // text inside a string is not an import (a benchmark writes an app's sources as strings)
  const strings = espree.tokenize(source, { ecmaVersion: 'latest', sourceType: 'module', range: true })
    .filter((t) => t.type === 'String' || t.type === 'Template').map((t) => t.range);
  const inString = (i) => strings.some(([a, b]) => i > a && i < b);
  return PATTERNS.flatMap((re) => [...source.matchAll(re)].filter((m) => !inString(m.index)).map((m) => m[2]));
}

/** 'util', 'contract', 'index', 'plugins', 'bin', or the folder name under lib/. */
function layerOf(file) {
  if (file === 'lib/index.js') return 'index';
  if (/^lib\/[^/]+\.js$/.test(file) || file.startsWith('lib/manifest/')) return 'contract';
  if (file.startsWith('lib/util/')) return 'util';
  const folder = /^lib\/([^/]+)\//.exec(file);
  if (folder) return folder[1];
  return file.split('/')[0]; // plugins, bin
}

/** The layers a module of `layer` may import. */
function allowedFrom(layer) {
  switch (layer) {
    case 'util': return ['util'];
    case 'contract': return ['contract', 'util'];
    case 'bin': return ['cli'];
    case 'index': return ['contract', 'util', 'compress', 'serve', 'watch', 'servers'];
    case 'cli': return ['contract', 'util', 'cli', 'compress', 'serve', 'watch', 'servers'];
    case 'watch': return ['contract', 'util', layer, 'compress', 'serve'];
    case 'plugins': return ['contract', 'util', layer, 'compress', 'serve', 'servers'];
    default: return ['contract', 'util', layer];
  }
}

const modules = [...jsFiles('lib'), ...jsFiles('plugins'), ...jsFiles('bin')];
/** @type {Map<string, string[]>} module → the modules it imports (repository-relative) */
const graph = new Map(modules.map((file) => {
  const specs = specifiersOf(fs.readFileSync(path.join(root, file), 'utf8')).filter((s) => s.startsWith('./') || s.startsWith('../'));
  return [file, [...new Set(specs.map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s))))]];
}));

test('the specifiers are read from every kind of import', () => {
  const source = [
    "import fs from 'node:fs';",
    "import { a,\n  b } from './a.js';",
    "export { c } from '../c.js';",
    "import './side.js';",
    "const { d } = await import('./d.js');",
    "/** @param {import('../e.js').E} e */",
    "const w = new URL('./worker.js', import.meta.url);",
    "const text = 'this import is not from here';",
    "const app = \"import('./generated.js').then(run);\";",
  ].join('\n');
  expect(specifiersOf(source)).toEqual(['node:fs', './a.js', '../c.js', './side.js', './d.js', '../e.js', './worker.js']);
  expect(graph.get('lib/index.js')).toEqual(expect.arrayContaining(['lib/compress/index.js', 'lib/watch/index.js', 'lib/errors.js']));
  expect(graph.get('lib/compress/variants/index.js')).toContain('lib/compress/variants/worker.js');
  expect(modules).toEqual(expect.arrayContaining(['lib/manifest/manifest.js', 'lib/serve/adapters/middleware.js', 'lib/cli/cli.js', 'plugins/vite.js', 'bin/precompressor.js']));
});

test('every relative import names an existing module', () => {
  // a JSDoc type may name a declaration file (lib/types.d.ts, the public types) by its .js name
  const exists = (to) => fs.existsSync(path.join(root, to)) || fs.existsSync(path.join(root, to.replace(/\.js$/, '.d.ts')));
  const missing = [...graph].flatMap(([from, tos]) => tos.filter((to) => !exists(to)).map((to) => `${from} → ${to}`));
  expect(missing).toEqual([]);
});

test('every import respects the layer rule (ARCHITECTURE.md)', () => {
  const violations = [];
  for (const [from, tos] of graph) {
    const allowed = allowedFrom(layerOf(from));
    for (const to of tos) {
      if (!allowed.includes(layerOf(to))) violations.push(`${from} (${layerOf(from)}) imports ${to} (${layerOf(to)})`);
    }
  }
  expect(violations).toEqual([]);
});

test('the layer rule rejects what it should', () => {
  expect(allowedFrom(layerOf('lib/util/format.js'))).not.toContain(layerOf('lib/compress/pass/report.js'));
  expect(allowedFrom(layerOf('lib/serve/site/table.js'))).not.toContain(layerOf('lib/compress/encoders/encode.js'));
  expect(allowedFrom(layerOf('lib/cache/store.js'))).toEqual(['contract', 'util', 'cache']);
  expect(allowedFrom(layerOf('lib/util/format.js'))).not.toContain(layerOf('lib/errors.js'));
  expect(allowedFrom(layerOf('lib/manifest/manifest.js'))).not.toContain(layerOf('lib/serve/index.js'));
  expect(allowedFrom(layerOf('lib/watch/watch.js'))).not.toContain(layerOf('lib/cli/cli.js'));
  expect(allowedFrom(layerOf('plugins/vite.js'))).not.toContain(layerOf('lib/index.js'));
});

/** Each cycle of `g` found by a depth-first walk, as 'a → b → a'. */
function findCycles(g) {
  const state = new Map(); // undefined: not seen, 1: on the current path, 2: done
  const cycles = [];
  const visit = (file, trail) => {
    state.set(file, 1);
    for (const to of g.get(file) ?? []) {
      if (state.get(to) === 1) cycles.push([...trail.slice(trail.indexOf(to)), to].join(' → '));
      else if (state.get(to) === undefined) visit(to, [...trail, to]);
    }
    state.set(file, 2);
  };
  for (const file of g.keys()) if (state.get(file) === undefined) visit(file, [file]);
  return cycles;
}

test('there are no import cycles', () => {
  expect(findCycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual(['a → b → c → a']);
  expect(findCycles(graph)).toEqual([]);
});

// The benchmarks run outside `npm test`: a module they name that moved would only show when someone
// runs them (the serving benchmark named lib/serve.js for a while after the #10 layout change).
test('every relative import of the benchmarks and examples resolves (lib(...) names in test/bench too)', () => {
  const missing = [];
  for (const file of [...jsFiles('test/bench'), ...jsFiles('examples')]) {
    const source = fs.readFileSync(path.join(root, file), 'utf8');
    const named = [...source.matchAll(/\blib\(\s*(['"])([^'"\n]+)\1\s*\)/g)].map((m) => path.join('lib', m[2]));
    const relative = specifiersOf(source).filter((s) => s.startsWith('.')).map((s) => path.join(path.dirname(file), s));
    for (const target of [...relative, ...named]) if (!fs.existsSync(path.join(root, target))) missing.push(`${file}: ${target}`);
  }
  expect(missing).toEqual([]);
});

// Rooms and doors (#26). A folder's door is its index.js; these folders must have one.
/** The wings made of rooms (a folder of lib/ with sub-folders), and their rooms: every one of them has a door. */
function dooredFolders(files) {
  const rooms = files.map((f) => /^lib\/[^/]+\/[^/]+(?=\/)/.exec(f)?.[0]).filter((d) => d !== undefined);
  return new Set([...rooms.map((r) => path.posix.dirname(r)), ...rooms]);
}

/** The folders of `file`, outermost first ('lib/compress/pass/x.js' → lib, lib/compress, lib/compress/pass). */
function foldersOf(file) {
  const parts = file.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Each import of `g` that enters a folder of `doored` other than through its door, or goes up a floor. */
function doorViolations(g, doored) {
  const found = [];
  for (const [from, tos] of g) {
    const own = new Set(foldersOf(from));
    for (const to of tos) {
      // the folders `to` is in that `from` is not: each is entered, and must be entered by its door
      const entered = foldersOf(to).filter((d) => !own.has(d) && doored.has(d));
      for (const d of entered) if (to !== `${d}/index.js`) found.push(`${from} enters ${d}/ by ${to}, not its door`);
      // a folder above the importer's own (the contract floor, lib/*.js, aside)
      const up = path.posix.dirname(to);
      if (up !== 'lib' && own.has(up) && up !== path.posix.dirname(from)) found.push(`${from} imports ${to}, a floor above it`);
    }
  }
  return found;
}

/** `g` with each module replaced by its folder (lib/index.js, the public API, stands apart from the contract floor), self-imports left out. */
function folderGraph(g) {
  const folders = new Map();
  // lib/manifest/ is on the contract floor with lib/*.js
  const folderOf = (file) => (file === 'lib/index.js' ? file : path.posix.dirname(file).replace(/^lib\/manifest$/, 'lib'));
  for (const [from, tos] of g) {
    const a = folderOf(from);
    const set = folders.get(a) ?? new Set();
    for (const to of tos) if (folderOf(to) !== a) set.add(folderOf(to));
    folders.set(a, set);
  }
  return new Map([...folders].map(([k, v]) => [k, [...v]]));
}

test('every wing made of rooms, and each room, has a door (index.js)', () => {
  const doored = dooredFolders(modules);
  expect([...doored]).toEqual(expect.arrayContaining(['lib/compress', 'lib/compress/pass', 'lib/serve', 'lib/serve/site', 'lib/watch']));
  expect([...doored].filter((d) => !modules.includes(`${d}/index.js`))).toEqual([]);
});

test('other wings and rooms enter a wing or room only through its door, and no import goes up a floor', () => {
  expect(doorViolations(graph, dooredFolders(modules))).toEqual([]);
});

test('the folders (wings and rooms) import each other in no cycle', () => {
  expect(findCycles(folderGraph(graph))).toEqual([]);
});

test('the door and room rules reject what they should (a synthetic house)', () => {
  const g = new Map([
    ['lib/cli/cli.js', ['lib/w/index.js', 'lib/w/a/x.js']], // the second skips the wing's door
    ['lib/w/index.js', ['lib/w/a/index.js']],
    ['lib/w/a/index.js', ['lib/w/a/x.js']],
    ['lib/w/a/x.js', ['lib/w/b/y.js', 'lib/errors.js']], // enters room b by a side door
    ['lib/w/b/index.js', ['lib/w/b/y.js']],
    ['lib/w/b/y.js', ['lib/w/index.js', 'lib/w/a/index.js']], // up to its wing's door; b → a while a → b
  ]);
  const doored = new Set(['lib/w', 'lib/w/a', 'lib/w/b']);
  expect(doorViolations(g, doored)).toEqual([
    'lib/cli/cli.js enters lib/w/ by lib/w/a/x.js, not its door',
    'lib/cli/cli.js enters lib/w/a/ by lib/w/a/x.js, not its door',
    'lib/w/a/x.js enters lib/w/b/ by lib/w/b/y.js, not its door',
    'lib/w/b/y.js imports lib/w/index.js, a floor above it',
  ]);
  expect(findCycles(folderGraph(g))).toEqual(['lib/w → lib/w/a → lib/w/b → lib/w', 'lib/w/a → lib/w/b → lib/w/a']);
  expect(doorViolations(new Map([['lib/w/a/x.js', ['lib/w/b/index.js', 'lib/paths.js']]]), doored)).toEqual([]);
});

test('no folder of lib/ holds more than 12 modules', () => {
  const counts = new Map();
  for (const file of jsFiles('lib')) counts.set(path.posix.dirname(file), (counts.get(path.posix.dirname(file)) ?? 0) + 1);
  expect([...counts].filter(([, n]) => n > 12)).toEqual([]);
});

// ARCHITECTURE.md is the map (#26): every module is on it, named by its folder and file
// (`pass/precompress.js`, `lib/errors.js`); a door (index.js) is named by the rule that makes it.
test('ARCHITECTURE.md names every module of lib/', () => {
  const map = fs.readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');
  const named = (file) => {
    const short = file.split('/').slice(-2).join('/');
    return new RegExp(`(?<![\\w-])${short.replace(/[.]/g, '\\.')}`).test(map);
  };
  expect(jsFiles('lib').filter((f) => !f.endsWith('/index.js') && !named(f))).toEqual([]);
});
