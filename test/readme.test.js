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
