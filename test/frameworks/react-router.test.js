import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { deltaEncoders } from '../../lib/compress/dictionaries/delta-encode.js';
import { makeApp, unsupported, runIn, startProcess, originIn, manifestOf, expectAllPaired, expectHydratesWithBr, expectServed } from '../helpers/framework-app.js';

// React Router framework mode (SSR), built for real from files written here, with the plain Vite
// plugin: build/client is what is deployed, build/server is left alone.

const skip = unsupported(['@react-router/dev', 'react-router', '@react-router/express', 'vite']);
if (skip) console.warn(`React Router tests skipped: ${skip}`);
const maybe = skip ? test.skip : test;

/** The home route, big enough for deploy deltas, `version` in its text. */
function homeOf(version) {
  const words = Array.from({ length: 500 }, (_, i) => `${version}word${(i * 7919) % 1000}`);
  return [
    "import { useState } from 'react';",
    `const words = ${JSON.stringify(words)};`,
    'export default function Home() {',
    '  const [n, setN] = useState(0);',
    `  return (<main><h1>Home ${version}</h1><button id="count" onClick={() => setN(n + 1)}>clicked {n}</button><ul>{words.map((w, i) => <li key={i}>{w}</li>)}</ul></main>);`,
    '}',
  ].join('\n');
}

const FILES = {
  // React Router checks that the app depends on what its default server entry imports
  'package.json': JSON.stringify({ name: 'rr', private: true, type: 'module', dependencies: { isbot: '^5', react: '^19', 'react-dom': '^19', 'react-router': '8.4.0', '@react-router/node': '8.4.0' } }),
  'react-router.config.js': 'export default { ssr: true };\n',
  'vite.config.js': "import { reactRouter } from '@react-router/dev/vite';\nimport precompressor from 'precompressor/vite';\nexport default { plugins: [reactRouter(), precompressor()] };\n",
  'app/root.jsx': [
    "import { Links, Meta, Outlet, Scripts, ScrollRestoration } from 'react-router';",
    'export function Layout({ children }) {',
    '  return (<html lang="en"><head><meta charSet="utf-8" /><Meta /><Links /></head><body>{children}<ScrollRestoration /><Scripts /></body></html>);',
    '}',
    'export default function App() { return <Outlet />; }',
  ].join('\n'),
  'app/routes.js': "import { index } from '@react-router/dev/routes';\nexport default [index('routes/home.jsx')];\n",
  'app/routes/home.jsx': homeOf('v1'),
  'server.mjs': [
    "import express from 'express';",
    "import { createRequestHandler } from '@react-router/express';",
    "import { serveStatic } from 'precompressor';",
    'const app = express();',
    "app.use(serveStatic('build/client'));",
    "app.all('/{*splat}', createRequestHandler({ build: await import('./build/server/index.js') }));",
    "const s = app.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${s.address().port}`));",
  ].join('\n'),
};

let root;
afterAll(() => root && fsp.rm(root, { recursive: true, force: true }));

maybe('build/client is compressed once, build/server untouched; Express sends br and hydrates; a second build pairs every changed bundle', async () => {
  root = await makeApp('react-router', FILES, ['@react-router/dev']);
  const build = () => runIn(root, '@react-router/dev/bin.cjs', ['build']);
  const first = await build();
  const client = path.join(root, 'build/client');
  const m1 = manifestOf(client);
  const serverFiles = fs.readdirSync(path.join(root, 'build/server'), { recursive: true }).map(String);
  expect(serverFiles.filter((f) => /\.(br|gz)$|precompressor-manifest/.test(f))).toEqual([]);
  const home = /** @type {string} */ (Object.keys(m1.files).find((f) => /^assets\/home-[\w-]{8}\.js$/.test(f)));

  const app = await startProcess(['server.mjs'], { cwd: root }, originIn);
  try {
    expect(await expectServed(app.origin, client, home)).toEqual({ home: { status: 200, encoding: undefined }, asset: { encoding: 'br', ours: true }, manifest: 404 });
    await expectHydratesWithBr(app.origin, '#count', 'Home v1');
  } finally {
    await app.stop();
  }

  if (deltaEncoders().length === 0) return;
  await fsp.writeFile(path.join(root, 'app/routes/home.jsx'), homeOf('v2'));
  const second = await build();
  const p = expectAllPaired('React Router', m1, manifestOf(client), [first.ms, second.ms]);
  expect(p.changed).toContain(Object.keys(manifestOf(client).files).find((f) => /^assets\/home-[\w-]{8}\.js$/.test(f)));
});
