// Jest setup file: every test file runs in its own empty working directory, so that defaults
// resolved from it (the dictionary store under node_modules/.cache, see lib/options.js) never
// write into the repository. Paths in the tests are absolute or resolved from import.meta.url.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-cwd-'));
process.chdir(dir);
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
