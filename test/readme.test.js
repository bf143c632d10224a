import fs from 'node:fs';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS } from '../lib/cli/options.js';

const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

test('the README starts with the set-up commands', () => {
  const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
  expect(firstBlock).toMatch(/npm install/);
  expect(firstBlock).toMatch(/npm start/);
  expect(firstBlock).toMatch(/npm test/);
});

test('the README options table lists every CLI flag with its default, and nothing else', () => {
  const start = readme.indexOf('## CLI options');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const rows = [...section.matchAll(/^\| `--([a-z-]+)` \| [^|]+ \| (\w+) \| ([^|]+) \|/gm)].map((m) => [m[1], m[2], m[3].trim()]);
  const expected = [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS].map((f) => [f.flag, f.type, f.default === '' ? 'none' : `\`${f.default}\``]);
  expect(rows).toEqual(expected);
});

test('docs/serve.md lists every serve flag with its type and default, and nothing else; the README states the same default port', async () => {
  const { SERVE_FLAGS, SERVE_DEFAULT_PORT } = await import('../lib/cli/serve.js');
  const doc = fs.readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `--([a-z-]+)` \| (\w+) \| `([^`]+)` \|/gm)].map((m) => [m[1], m[2], m[3]]);
  expect(rows).toEqual(SERVE_FLAGS.map((f) => [f.flag, f.type, String(f.default)]));
  expect(readme).toContain(`\`precompressor serve <dir>\`** serves an already compressed folder`);
  expect(readme).toContain(`on \`http://127.0.0.1:${SERVE_DEFAULT_PORT}/\` by default`);
  expect(doc).toContain(`The port is fixed by default (${SERVE_DEFAULT_PORT},`);
});
