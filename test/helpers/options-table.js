// The README's table of CLI flags, made from the options table (lib/options.js OPTIONS, through
// CLI_FLAGS): test/readme.test.js checks the README holds exactly this; `npm run docs:options`
// writes it there.
import fs from 'node:fs';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS } from '../../lib/cli/options.js';

const README = new URL('../../README.md', import.meta.url);
const esc = (s) => String(s).replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The Markdown table: flag, API option, type, default, meaning. */
export function flagsTable() {
  const rows = [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS].map((f) =>
    `| \`--${f.flag}\` | ${'option' in f ? `\`${f.option}\`` : '—'} | ${f.type} | ${f.default === '' ? 'none' : `\`${f.default}\``} | ${esc(f.describe)} |`);
  return ['| flag | API option | type | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The table as it is in the README (the first table after "## CLI options"). */
export function readmeTable(text) {
  const start = text.indexOf('\n| flag |', text.indexOf('## CLI options'));
  const end = text.indexOf('\n\n', start + 1);
  return { start: start + 1, end, table: text.slice(start + 1, end) };
}

if (process.argv[1] && new URL(`file://${process.argv[1]}`).href === import.meta.url) {
  const text = fs.readFileSync(README, 'utf8');
  const { start, end } = readmeTable(text);
  fs.writeFileSync(README, text.slice(0, start) + flagsTable() + text.slice(end));
}
