import fs from 'node:fs/promises';
import net from 'node:net';
import { startPreview } from '../../lib/index.js';
import { makeSite, request, decode } from '../helpers/serve-site.js';

test('startPreview serves a built site on a free port and prints its URL', async () => {
  const site = await makeSite({ 'index.html': '<h1>preview</h1>'.repeat(20) });
  const p = await startPreview({ root: site.dir, maxAge: '1m' });
  try {
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const port = Number(new URL(p.url).port);
    const r = await request(port, '/', { headers: { 'accept-encoding': 'br' } });
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('public, max-age=60');
    expect(decode(r).toString()).toContain('<h1>preview</h1>');
    expect((await request(port, '/nope')).status).toBe(404);
  } finally {
    await p.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});

test('startPreview rejects when the port is taken, and when the manifest is missing', async () => {
  const site = await makeSite({ 'a.txt': 'a' });
  const blocker = net.createServer();
  await new Promise((r) => blocker.listen(0, '127.0.0.1', r));
  try {
    await expect(startPreview({ root: site.dir, port: blocker.address().port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await fs.rm(site.manifestPath);
    await expect(startPreview({ root: site.dir })).rejects.toMatchObject({ code: 'ERR_PRECOMPRESSOR_MANIFEST' });
  } finally {
    blocker.close();
    await fs.rm(site.dir, { recursive: true, force: true });
  }
});
