import fs from 'node:fs';
import { flagsTable, readmeTable, serveFlagsTable, serveDocTable } from './helpers/options-table.js';

const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

test('the README starts with the set-up commands', () => {
  const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
  expect(firstBlock).toMatch(/npm install/);
  expect(firstBlock).toMatch(/npm start/);
  expect(firstBlock).toMatch(/npm test/);
});

test('the README options table is the one the options table makes (npm run docs:options writes it)', () => {
  expect(readmeTable(readme).table).toBe(flagsTable());
});

// Every relative link in the project's Markdown points at a file that exists, and every
// `#anchor` into a Markdown file at one of its headings (slugs as GitHub makes them).
const root = new URL('../', import.meta.url);
const markdownFiles = ['README.md', 'ARCHITECTURE.md', 'CHANGELOG.md', ...fs.readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  .filter((f) => fs.existsSync(new URL(f, root)));

/** Markdown text without fenced code blocks and inline code spans, where `[x](y)` is not a link. */
function prose(md) {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
function headingAnchors(md) {
  const seen = new Map();
  const anchors = new Set();
  for (const [, text] of md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

test('the Markdown files are found', () => {
  expect(markdownFiles).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/benchmarks.md', 'docs/guarantees.md', 'docs/manifest.md']));
});

test('heading anchors are made as GitHub makes them', () => {
  const anchors = headingAnchors('# A b\n## `watch(dir, options)`\n### Serve: node:http (RFC 9110)\n## A b\n```sh\n# not a heading\n```\n');
  expect([...anchors]).toEqual(['a-b', 'watchdir-options', 'serve-nodehttp-rfc-9110', 'a-b-1']);
});

test.each(markdownFiles)('every relative link in %s points at an existing file and heading', (file) => {
  const from = new URL(file, root);
  const broken = [];
  for (const [, target] of prose(fs.readFileSync(from, 'utf8')).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [pathPart, anchor] = target.split('#');
    const dest = pathPart === '' ? from : new URL(decodeURIComponent(pathPart), from);
    if (!fs.existsSync(dest)) {
      broken.push(`${target}: no such file`);
    } else if (anchor !== undefined && dest.pathname.endsWith('.md') && !headingAnchors(fs.readFileSync(dest, 'utf8')).has(decodeURIComponent(anchor))) {
      broken.push(`${target}: no such heading`);
    }
  }
  expect(broken).toEqual([]);
});

test('docs/serve.md\'s table of serve flags is the one SERVE_FLAGS makes (npm run docs:options writes it)', () => {
  const doc = fs.readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8');
  expect(serveDocTable(doc).table).toBe(serveFlagsTable());
});

test('the README names every serve flag and states the same default port', async () => {
  const { SERVE_FLAGS, SERVE_DEFAULT_PORT } = await import('../lib/cli/serve.js');
  const doc = fs.readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Preview a build'), readme.indexOf('\n## ', readme.indexOf('## Preview a build') + 1));
  expect(SERVE_FLAGS.filter((f) => !section.includes(`\`--${f.flag}\``)).map((f) => f.flag)).toEqual([]);
  expect(readme).toContain(`\`precompressor serve <dir>\`** serves an already compressed folder`);
  expect(readme).toContain(`on \`http://127.0.0.1:${SERVE_DEFAULT_PORT}/\` by default`);
  expect(doc).toContain(`The port is fixed by default (${SERVE_DEFAULT_PORT},`);
});

test('docs/manifest.md and docs/deltas.md name no function the package does not export', async () => {
  const api = { ...(await import('../lib/index.js')), ...(await import('../plugins/vite.js')) };
  // methods of what the package returns (the middleware, the watcher, the preview server) and Express's next()
  const methods = new Set(['reload', 'close', 'memory', 'on', 'next']);
  for (const file of ['docs/manifest.md', 'docs/deltas.md']) {
    const text = fs.readFileSync(new URL(file, root), 'utf8');
    const named = [...text.matchAll(/`([A-Za-z_$][\w$]*)\(\)`/g)].map((m) => m[1]);
    expect([file, named.filter((n) => !(n in api) && !methods.has(n))]).toEqual([file, []]);
  }
});

// `npm run build` in the docs is the user's own build: only our development scripts are checked.
test('the bench, test and docs scripts the Markdown files run are in package.json; the README runs bench:build', () => {
  const { scripts } = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'));
  const named = new Set();
  for (const f of markdownFiles) {
    const text = fs.readFileSync(new URL(f, root), 'utf8');
    for (const [, name] of text.matchAll(/\bnpm run ((?:bench|test|docs:)[\w:.-]*)/g)) named.add(name);
  }
  expect([...named].filter((n) => !(n in scripts))).toEqual([]);
  expect(fs.readFileSync(new URL('README.md', root), 'utf8')).toMatch(/npm run bench:build -- --apps starter,files10/);
});
