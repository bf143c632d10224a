import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { runCommand } from '../helpers/spawn.js';
import { makeApp, unsupported, heavyBuildSkip, runIn, startServe, get, manifestOf, projectEnv, BIN, expectHydratesWithBr } from '../helpers/framework-app.js';
import { expectVariant, expectDelta } from '../helpers/served-variants.js';
import { ANGULAR_WORKSPACE, ANGULAR_OUT, angularFiles, wordsModule } from '../helpers/recipe-apps.js';

// Angular 22 (the application builder, `ng build`) built for real (test/helpers/recipe-apps.js), then the
// recipe of docs/frameworks.md: `ng build && precompressor dist/my-app/browser`, served by
// `precompressor serve --spa`. Its packages are the workspace test/frameworks/angular (TypeScript 6.0
// for Angular's compiler beside the repository's TypeScript 7).

const PACKAGES = ['@angular/cli', `${ANGULAR_WORKSPACE}/node_modules/@angular/build`];
const skip = unsupported(PACKAGES) ?? heavyBuildSkip(PACKAGES); // Angular's engines first: the reason on Node 22.12
if (skip) console.warn(`Angular tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

const apps = [];
afterAll(() => Promise.all(apps.map((a) => fsp.rm(a, { recursive: true, force: true }))));

const OUT = ANGULAR_OUT;
const NAV = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** `ng build`, then the recipe's postbuild step; resolves with the CLI's summary. */
async function buildAndCompress(root) {
  await runIn(root, '@angular/cli/bin/ng.js', ['build']);
  const r = await runCommand(process.execPath, [BIN, OUT], { cwd: root, env: projectEnv() });
  if (r.code !== 0) throw new Error(`precompressor ${OUT} exited ${r.code}:\n${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}

const mainOf = (m) => /** @type {string} */ (Object.keys(m.files).find((f) => /^main-[A-Z0-9]{8}\.js$/.test(f)));

maybe('ng build && precompressor dist/my-app/browser: hashed bundles immutable as exact br/gzip, client routes answer index.html, and a changed main bundle is a delta', async () => {
  const root = await makeApp('angular', angularFiles(), [ANGULAR_WORKSPACE]);
  apps.push(root);
  const out = path.join(root, OUT);
  await buildAndCompress(root);
  const m1 = manifestOf(out);
  const main1 = mainOf(m1);
  const hashed = Object.keys(m1.files).filter((f) => /^(main|chunk|styles)-[A-Z0-9]{8}\.(js|css)$/.test(f));
  expect(hashed.length).toBeGreaterThanOrEqual(3); // main, the lazy chunk, styles
  for (const rel of hashed) expect(m1.files[rel].hashed).toBe(true); // Angular's output hashing, by the name rule
  expect(m1.files[main1].dictionary).toMatchObject({ match: 'main-*.js', dest: 'script', hashed: true });
  const oldMain = fs.readFileSync(path.join(out, main1)); // ng build empties dist/ the next time

  const served = await startServe(out, ['--spa']);
  try {
    for (const rel of hashed) {
      const r = await expectVariant(served.origin, out, rel, 'br');
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const main = await expectVariant(served.origin, out, main1, 'gzip');
    expect(main.headers['use-as-dictionary']).toBe('match="main-*.js", match-dest=("script")');
    const home = await expectVariant(served.origin, out, 'index.html', 'br', '/', { accept: NAV });
    expect(home.headers['cache-control']).toBe('public, max-age=0');
    await expectVariant(served.origin, out, 'index.html', 'br', '/some/client/route', { accept: NAV }); // --spa
    expect((await get(`${served.origin}/main.js`, { accept: '*/*' })).status).toBe(404); // not a navigation: no fallback
    await expectHydratesWithBr(served.origin, 'button', 'Home'); // in Chromium, where installed
  } finally {
    await served.stop();
  }

  if (deltaEncoders().length === 0) return console.warn(`Angular delta skipped: Node ${process.version} has no dictionary encoder`);
  await fsp.writeFile(path.join(root, 'src/words.ts'), wordsModule('v2'));
  const summary = await buildAndCompress(root);
  expect(summary).toMatch(/deltas: 1 servable file \(/);
  const m2 = manifestOf(out);
  const main2 = mainOf(m2);
  expect(main2).not.toBe(main1);
  const deltas = m2.files[main2].deltas?.[m1.files[main1].dictionary.hash] ?? {};
  expect(Object.keys(deltas).sort()).toEqual([...deltaEncoders()].sort());
  const again = await startServe(out, ['--spa']);
  try {
    const got = await expectDelta(again.origin, out, main2, oldMain, deltaEncoders());
    expect(got.bytes).toBe(deltas[got.encoding].size);
    expect(got.bytes * 10).toBeLessThan(m2.files[main2].variants.br.size); // a returning visitor's bytes
  } finally {
    await again.stop();
  }
}, 240_000); // two real builds and Chromium
