import fs from 'node:fs/promises';
import path from 'node:path';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { getEach } from '../helpers/serve-site.js';
import { startServe } from '../helpers/framework-app.js';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';

// A Next.js static export writes `about.html` beside an `about/` folder (its nested routes): hosts
// answer `/about` with about.html; express.static redirects to `/about/`, which has no index (404).

let work;
let dir;
beforeAll(async () => {
  work = await tempDir();
  dir = path.join(work, 'out');
  await writeTree(dir, {
    'index.html': `<h1>home</h1>${textOf(2_000)}`,
    'about.html': `<h1>about</h1>${textOf(2_000, 2)}`,
    'about/team.html': `<h1>team</h1>${textOf(2_000, 3)}`,
    'docs/index.html': `<h1>docs</h1>${textOf(2_000, 4)}`,
  });
  await precompress(dir, { cache: false, siteDictionary: false });
});
afterAll(() => fs.rm(work, { recursive: true, force: true }));

async function answers(options, paths) {
  return getEach(serveStatic(dir, { watch: false, ...options }), paths, { 'accept-encoding': 'br' }, (p, r) => [p, r.status, r.headers.location ?? r.headers['content-encoding']]);
}

test("serveStatic keeps express.static's order by default: /about redirects to the folder", async () => {
  expect(await answers({ extensions: ['html'] }, ['/about', '/about/', '/about/team', '/docs'])).toEqual([
    ['/about', 301, '/about/'], ['/about/', 404, undefined], ['/about/team', 200, 'br'], ['/docs', 301, '/docs/'],
  ]);
});

test('extensionsFirst: /about answers about.html before the folder; a folder without such a file still redirects', async () => {
  expect(await answers({ extensions: ['html'], extensionsFirst: true }, ['/about', '/about/team', '/docs', '/docs/'])).toEqual([
    ['/about', 200, 'br'], ['/about/team', 200, 'br'], ['/docs', 301, '/docs/'], ['/docs/', 200, 'br'],
  ]);
});

test('precompressor serve: extensions first by default, --no-extensions-first for the other order', async () => {
  for (const [args, status] of [[[], 200], [['--no-extensions-first'], 301]]) {
    const served = await startServe(dir, args);
    try {
      const r = await fetch(`${served.origin}/about`, { redirect: 'manual', headers: { 'accept-encoding': 'br' } });
      expect([args, r.status]).toEqual([args, status]);
      if (status === 200) expect(await r.text()).toContain('<h1>about</h1>');
    } finally {
      await served.stop();
    }
  }
});
