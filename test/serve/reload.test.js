import fs from 'node:fs/promises';
import { serveStatic } from '../../lib/serve/middleware.js';
import { makeSite, decode, serveSite } from '../helpers/serve-site.js';

// serveStatic learns of a new build from file-system events (lib/serve/file-events.js). These
// tests replace the served folder in ways whose events are easy to lose, and require the server
// to converge: the new bytes, and their br variant, within WAIT_MS of the last write.

/** At most this long for the server to converge: a regression fails here in seconds, never hangs. */
const WAIT_MS = 10_000;

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
