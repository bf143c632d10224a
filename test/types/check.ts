// Compiled by `npm run typecheck` (tsc --noEmit): the shipped declarations must describe
// real usage of every public export.
import http from 'node:http';
import { precompress, serveStatic, startPreview, watch, PrecompressorError, type Report, type Manifest } from 'precompressor';
import vitePlugin from 'precompressor/vite';
import { precompressed } from 'precompressor/sveltekit';
import astroIntegration from 'precompressor/astro';
import nuxtModule from 'precompressor/nuxt';
import PrecompressorPlugin from 'precompressor/webpack';
import { fetchHandler, type FetchHandler, type ResponseHeaders } from 'precompressor/fetch';
import fastifyPlugin, { precompressor as namedPlugin } from 'precompressor/fastify';
import Fastify from 'fastify';

async function main(): Promise<void> {
  const adapter = precompressed({ name: 'adapter-static', adapt: async (builder: unknown) => void builder, extra: 1 }, { encodings: ['br', 'gzip'], verbose: true });
  const keptType: number = adapter.extra;
  void keptType;
  const integration = astroIntegration({ exclude: ['**/*.map'] });
  const integrationName: 'precompressor' = integration.name;
  void integrationName;
  const webpackPlugins: { apply(compiler: any): void }[] = [new PrecompressorPlugin({ encodings: ['br', 'gzip'], verbose: true, exclude: ['**/*.map'] })];
  void webpackPlugins;
  const nuxtModules: [typeof nuxtModule, { encodings: ('br' | 'gzip')[] }][] = [[nuxtModule, { encodings: ['br', 'gzip'] }]];
  void nuxtModules;
  const report: Report = await precompress('dist', { encodings: ['br', 'gzip'], exclude: ['**/*.map'], concurrency: 2, onProgress: (p) => void p.filesDone });
  const failed: string[] = report.failures.map((f) => `${f.path}: ${f.message}`);
  const br: number | undefined = report.bytes.br;
  const saved: number = report.deltas.savedBytes;
  void saved;
  await precompress('dist', { previous: 'old-dist', dictionaryStore: '.cache/dicts', dictionaryVersions: 2, deltaMargin: 0.2, hashPattern: /-(?<hash>[a-z0-9]{8})\./ });
  void failed;
  void br;
  const cached = await precompress('dist', { cache: true, cacheDir: 'node_modules/.cache/precompressor/variants', cacheMaxSize: '1GiB' });
  const fromCache: number = cached.files.fromCache + cached.cache.hits;
  const cpuSaved: number = cached.cache.cpuSavedMs;
  void fromCache;
  void cpuSaved;
  await precompress('dist', { cache: false, cacheMaxSize: 512 * 1024 * 1024 });

  const mw = serveStatic('dist', { maxAge: '1d', immutable: true, fallthrough: false, spa: true, dictionaries: true, immutableHashed: false });
  http.createServer((req, res) => mw(req, res, () => { res.statusCode = 404; res.end(); })).listen(0);
  await mw.reload();
  mw.close();
  serveStatic('uploads', null).close();
  serveStatic('uploads', { maxage: Infinity, unlisted: true }).close();

  const preview = await startPreview({ root: 'dist', port: 0, host: '0.0.0.0', spa: true, maxAge: '1h' });
  const urls: string[] = preview.urls;
  console.log(preview.url, urls.length, preview.server.listening);
  await preview.close();

  const w = watch('dist', { debounce: 50, exclude: '**/*.map' });
  const first: Report = await w.ready;
  w.on('batch', (b) => console.log(b.initial, b.events.length, b.changes.length, b.held.join(', ')));
  await w.close();
  void first;

  try {
    await precompress('missing');
  } catch (err) {
    if (err instanceof PrecompressorError) console.log(err.code);
  }
  const m: Manifest | null = null;
  void m;
  void vitePlugin({ exclude: ['**/*.map'] });
  void vitePlugin({ cache: false, cacheDir: '.cache/variants', cacheMaxSize: '256MB', ssr: true });

  const files: FetchHandler = fetchHandler('dist', {
    maxAge: '1d', fallthrough: false,
    setHeaders: (headers: ResponseHeaders, path: string) => void headers.setHeader('X-Path', path),
  });
  const answer: Response | undefined = await files(new Request('http://localhost/index.html'));
  void answer?.status;
  await files.settled();
  files.close();
  const app = Fastify();
  await app.register(fastifyPlugin, { root: 'dist', prefix: '/static', immutableHashed: true });
  await app.register(namedPlugin, { root: 'public', setHeaders: (headers) => void headers.removeHeader('Cache-Control') });
}
void main;
