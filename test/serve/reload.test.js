import fs from 'node:fs/promises';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';
import { makeSite, decode, serveSite } from '../helpers/serve-site.js';

// serveStatic learns of a new build from file-system events (lib/serve/site/file-events.js). These
// tests replace the served folder in ways whose events are easy to lose, and require the server
// to converge: the new bytes, and their br variant, within WAIT_MS of the last write.

/**
 * A fail-safe far above the normal time (milliseconds, even on a loaded machine) and below
 * jest's 60 s: a regression fails with what was seen, never hangs.
 */
const WAIT_MS = 30_000;

const cleanup = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

const page = (word, n) => `<!doctype html><title>${word}</title>${`<p>${word}</p>`.repeat(n)}`;

/**
 * Ask for `p` with br until the response is br and decodes to `want`, each response being whole
 * and one of `allowed` (old or new bytes, never anything else); fails after WAIT_MS.
 * @param {{ get: Function }} s
 * @param {string} p
 * @param {string} want
 * @param {string[]} allowed
 */
async function converges(s, p, want, allowed) {
  const deadline = Date.now() + WAIT_MS;
  const seen = new Set();
  for (;;) {
    const res = await s.get(p, { 'accept-encoding': 'br' });
    const text = decode(res).toString();
    expect(allowed).toContain(text);
    seen.add(`${res.headers['content-encoding'] ?? 'identity'} ${allowed.indexOf(text)}`);
    if (res.headers['content-encoding'] === 'br' && text === want) return;
    if (Date.now() > deadline) throw new Error(`${p}: not the new br body within ${WAIT_MS} ms; saw (encoding, version) ${[...seen].join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Ask for `p` until the status is `status`; fails after WAIT_MS.
 * @param {{ get: Function }} s
 * @param {string} p
 * @param {number} status
 */
async function statusBecomes(s, p, status) {
  const deadline = Date.now() + WAIT_MS;
  let got;
  while ((got = (await s.get(p)).status) !== status) {
    if (Date.now() > deadline) throw new Error(`${p}: still ${got}, not ${status}, after ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('the served folder replaced by a rename (mv next dist): the new build is served, its variants too, and watched from then on', async () => {
  const before = { 'index.html': page('one', 80), 'assets/app.js': page('app1', 90) };
  const s = await serveSite(serveStatic, cleanup, before);
  const old = `${s.dir}-old`;
  cleanup.push(() => fs.rm(old, { recursive: true, force: true }));
  for (const p of ['/index.html', '/assets/app.js']) await converges(s, p, before[p.slice(1)], [before[p.slice(1)]]); // bodies held in memory

  const next = { 'index.html': page('two', 95), 'assets/app.js': page('app2', 70) };
  const built = await makeSite(next, { dir: `${s.dir}-next` });
  await fs.rename(s.dir, old);
  await fs.rename(built.dir, s.dir);
  for (const p of ['/index.html', '/assets/app.js']) await converges(s, p, next[p.slice(1)], [before[p.slice(1)], next[p.slice(1)]]);

  // The new folders are watched: a later build written in place is seen too, down to a subfolder.
  const third = { 'index.html': page('three', 60), 'assets/app.js': page('app3', 100) };
  await makeSite(third, { dir: s.dir });
  for (const p of ['/index.html', '/assets/app.js']) await converges(s, p, third[p.slice(1)], [next[p.slice(1)], third[p.slice(1)]]);
});

test('the served folder moved away, seen gone by the server, then the new one moved in: the new build is served', async () => {
  const before = { 'index.html': page('one', 80) };
  const s = await serveSite(serveStatic, cleanup, before);
  const old = `${s.dir}-old`;
  cleanup.push(() => fs.rm(old, { recursive: true, force: true }));
  await converges(s, '/index.html', before['index.html'], [before['index.html']]);
  const next = { 'index.html': page('two', 95) };
  const built = await makeSite(next, { dir: `${s.dir}-next` });

  // The order that lost the new build: the server handles the folder's move (its bodies dropped,
  // a reload that finds no manifest) before the new folder is there.
  await fs.rename(s.dir, old);
  await statusBecomes(s, '/index.html', 404);
  await s.mw.settled();
  await fs.rename(built.dir, s.dir);
  await statusBecomes(s, '/index.html', 200); // the 404 is remembered until the new folder's event
  await converges(s, '/index.html', next['index.html'], [next['index.html']]);
});
