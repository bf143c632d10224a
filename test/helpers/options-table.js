// The README's table of CLI flags, made from the options table (lib/options.js OPTIONS, through
// CLI_FLAGS), and docs/serve.md's table of serve flags, made from SERVE_FLAGS (lib/cli/serve.js):
// test/readme.test.js checks the files hold exactly these; `npm run docs:options` writes them there.
import fs from 'node:fs';
import { CLI_FLAGS, CLI_OUTPUT_FLAGS } from '../../lib/cli/options.js';
import { SERVE_FLAGS } from '../../lib/cli/serve.js';
import { PREVIEW_LIMITS } from '../../lib/serve/http/options.js';

const README = new URL('../../README.md', import.meta.url);
const SERVE_DOC = new URL('../../docs/serve.md', import.meta.url);
const esc = (s) => String(s).replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** Markdown text: `<` and `>` escaped outside code spans (inside one they show as typed). */
const mdText = (s) => String(s).split('`').map((part, i) => (i % 2 === 1 ? part : esc(part))).join('`');

/** The Markdown table: flag, API option, type, default, meaning. */
export function flagsTable() {
  const rows = [...CLI_FLAGS, ...CLI_OUTPUT_FLAGS].map((f) =>
    `| \`--${f.flag}\` | ${'option' in f ? `\`${f.option}\`` : '—'} | ${f.type} | ${f.default === '' ? 'none' : `\`${f.default}\``} | ${esc(f.describe)} |`);
  return ['| flag | API option | type | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/**
 * docs/serve.md's table: flag, type, default, meaning, and the serveStatic option it sets (a
 * server limit of startPreview() names the node:http server's field instead).
 */
export function serveFlagsTable() {
  const column = (f) => {
    if (f.option === null) return '—';
    return Object.hasOwn(PREVIEW_LIMITS, f.option) ? `— (\`server.${f.option}\`)` : `\`${f.option}\``;
  };
  const rows = SERVE_FLAGS.map((f) =>
    `| \`--${f.flag}\` | ${f.type} | \`${f.default}\` | ${mdText(f.describe)} | ${column(f)} |`);
  return ['| Flag | Type | Default | Description | serveStatic option |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The first table whose head starts with `head` after `heading` in `text`. */
function tableAfter(text, heading, head) {
  const start = text.indexOf(`\n${head}`, text.indexOf(heading));
  const end = text.indexOf('\n\n', start + 1);
  return { start: start + 1, end, table: text.slice(start + 1, end) };
}

/** The table as it is in the README (the first table after "## CLI options"). */
export const readmeTable = (text) => tableAfter(text, '## CLI options', '| flag |');

/** The table as it is in docs/serve.md (the first table after "## Flags"). */
export const serveDocTable = (text) => tableAfter(text, '## Flags', '| Flag |');

if (process.argv[1] && new URL(`file://${process.argv[1]}`).href === import.meta.url) {
  for (const [file, find, make] of [[README, readmeTable, flagsTable], [SERVE_DOC, serveDocTable, serveFlagsTable]]) {
    const text = fs.readFileSync(file, 'utf8');
    const { start, end } = find(text);
    fs.writeFileSync(file, text.slice(0, start) + make() + text.slice(end));
  }
}
