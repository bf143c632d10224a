import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

// A folder and file names that carry terminal escapes and line breaks (#17, item 8): no raw
// control character reaches the terminal and no name forges a line; --json keeps them exact.

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
const EVIL_FILE = 'x\x1b[31m\nerror: forged.js';
const EVIL_DIR = 'site\x1b]0;title\x07\r\nerror: forged';

let tmp;
beforeEach(async () => {
  tmp = await tempDir('pc-escape-');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

test('the CLI prints warnings, errors and the summary with control characters escaped; --json is exact', async () => {
  const root = path.join(tmp, EVIL_DIR);
  await writeTree(root, { 'index.html': textOf(3000), 'app.js': textOf(9000, 2), [EVIL_FILE]: textOf(4000, 3) });
  const r = await runCommand(process.execPath, [BIN, root]);
  expect(r.code).toBe(0);
  const all = r.stdout + r.stderr;
  // eslint-disable-next-line no-control-regex -- no control character but the line ends
  expect(all).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
  const lines = all.split('\n').filter(Boolean);
  expect(lines.filter((l) => l.startsWith('error:'))).toEqual([]);
  expect(r.stderr).toBe('warning: x\\x1b[31m\\nerror: forged.js: name contains a control character: left out of the manifest (it could not be served)\n');
  expect(r.stdout).toContain(`files in ${tmp}/site\\x1b]0;title\\x07\\r\\nerror: forged (`);

  const j = await runCommand(process.execPath, [BIN, root, '--json']);
  const report = JSON.parse(j.stdout);
  expect(report.root).toBe(root);
  expect(report.warnings).toEqual([{ path: EVIL_FILE, message: expect.any(String) }]);
});
