import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { unlistedOf, auditMessage } from '../../lib/serve/site/audit.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { startProcess } from '../helpers/framework-app.js';

// The start-up audit: what in a served folder does not match its manifest is said once, so a 404
// on `/` or an uncompressed response never comes without a word.

test('unlistedOf: listed files, our variants and deltas, the manifest, temps and dotfiles are not unlisted; HTML comes first', () => {
  const listed = { 'app.js': {}, 'index.html': {} };
  const rels = ['app.js', 'app.js.br', 'app.js.gz', 'app.js.0123456789abcdef.dcb', 'index.html', 'precompressor-manifest.json',
    'x.js.pctmp', '.env', 'z.js', 'z.js.br', 'about.html', 'b/page.htm'];
  expect(unlistedOf(rels, listed, { manifestRel: 'precompressor-manifest.json', dotfiles: false })).toEqual(['about.html', 'b/page.htm', 'z.js', 'z.js.br']);
  expect(unlistedOf(['.env'], listed, { manifestRel: null, dotfiles: true })).toEqual(['.env']);
});

test('auditMessage: null when all matches; otherwise one message naming the files, what happens to them and what to do', () => {
  expect(auditMessage('/site', { unlisted: [], mismatched: [], changed: [], servesUnlisted: false })).toBeNull();
  const m = /** @type {string} */ (auditMessage('/site', {
    unlisted: ['index.html', 'a.js', 'b.js', 'c.js', 'd.js', 'e.js'],
    mismatched: [{ rel: 'app.js', encoding: 'br', listed: 9312, found: 26632 }],
    changed: [],
    servesUnlisted: false,
  }));
  expect(m).toBe('precompressor: /site: 6 files are not in the manifest (1 HTML): index.html, a.js, b.js, c.js, d.js and 1 more; they are not served. ' +
    'They were written after the folder was compressed: compress it after the framework is done (docs/frameworks.md), or run precompressor on it again. ' +
    '1 variant does not match the manifest (app.js br: 9312 B listed, 26632 B on disk); those files are sent without that encoding. ' +
    "Another tool compressed the folder after precompressor (adapter-node's precompress, Nitro's compressPublicAssets, a compression plugin): " +
    "turn it off, or use the framework's precompressor entry point (docs/frameworks.md).");
});

/** A compressed site, then what a framework does after the pass: a page added, a variant rewritten. */
async function siteChangedAfterThePass() {
  const dir = await tempDir('pc-audit-');
  await writeTree(dir, { 'app.js': textOf(20000), 'style.css': textOf(5000, 3) });
  expect((await precompress(dir, { deltas: false })).ok).toBe(true);
  await writeTree(dir, { 'index.html': '<!doctype html><p>home</p>', 'app.js.br': Buffer.alloc(100, 1) });
  return dir;
}

test('serveStatic says it once, through onWarning, after start-up', async () => {
  const dir = await siteChangedAfterThePass();
  const said = /** @type {string[]} */ ([]);
  let told = () => {};
  const once = new Promise((resolve) => (told = resolve));
  const mw = serveStatic(dir, { watch: false, onWarning: (m) => (said.push(m), told()) });
  await once;
  mw.close();
  expect(said).toHaveLength(1);
  expect(said[0]).toContain('1 file is not in the manifest (1 HTML): index.html; they are not served');
  expect(said[0]).toMatch(/1 variant does not match the manifest \(app\.js br: \d+ B listed, 100 B on disk\)/);
  serveStatic(dir, { watch: false, onWarning: null }).close(); // null: no audit
  expect(() => serveStatic(dir, { onWarning: 'log' })).toThrow('Expected options.onWarning to be a function or null, got "log" (string)');
  await fs.rm(dir, { recursive: true, force: true });
});

test('precompressor serve prints it at start-up', async () => {
  const dir = await siteChangedAfterThePass();
  const bin = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));
  const p = await startProcess([bin, 'serve', dir, '--port', '0', '--host', '127.0.0.1'], {}, (out) => (out.includes('not in the manifest') ? 'said' : null));
  await p.stop();
  expect(p.output()).toContain('index.html; they are not served');
  await fs.rm(dir, { recursive: true, force: true });
});
