// Jest setup file: every test file runs in its own empty working directory, so that defaults
// resolved from it (the dictionary store under node_modules/.cache, see lib/options.js) never
// write into the repository. Paths in the tests are absolute or resolved from import.meta.url.
// The caches' default folder (cacheRoot() in lib/paths.js: the variant cache and the dictionary
// store) is a temp folder of its own too, through CACHE_DIR, which the CLI and the other processes
// the tests spawn inherit: no test fills the repository's or the user's cache.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-cwd-'));
const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-cache-'));
fs.chmodSync(cache, 0o1777); // the reliability suite runs the CLI as other users too
process.chdir(dir);
process.env.CACHE_DIR = cache;
process.on('exit', () => {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(cache, { recursive: true, force: true });
});
