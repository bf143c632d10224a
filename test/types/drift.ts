// Compiled by `npm run typecheck`: every public function declared in lib/index.d.ts has the parameters
// of its implementation's JSDoc signature and returns what that declares, so neither side changes alone.
// (The implementations name the types of lib/types.d.ts, so their bodies are checked against them too.)
import type * as Declared from '../../lib/index.js';
import type { precompress } from '../../lib/compress/pass/precompress.js';
import type { serveStatic } from '../../lib/serve/adapters/middleware.js';
import type { startPreview } from '../../lib/serve/adapters/preview.js';
import type { watch } from '../../lib/watch/watch.js';
import type { PrecompressorError } from '../../lib/errors.js';
import type * as DeclaredFetch from '../../lib/fetch.js';
import type * as DeclaredFastify from '../../lib/fastify.js';
import type { fetchHandler } from '../../lib/serve/adapters/fetch.js';
import type { precompressor } from '../../lib/serve/adapters/fastify.js';

type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Same<Impl extends (...args: any[]) => unknown, Decl extends (...args: any[]) => unknown> =
  Mutual<Parameters<Impl>, Parameters<Decl>> extends true ? ([ReturnType<Impl>] extends [ReturnType<Decl>] ? true : false) : false;

export const drift: [
  Same<typeof precompress, typeof Declared.precompress>,
  Same<typeof serveStatic, typeof Declared.serveStatic>,
  Same<typeof startPreview, typeof Declared.startPreview>,
  Same<typeof watch, typeof Declared.watch>,
  [PrecompressorError] extends [Declared.PrecompressorError] ? true : false,
  Same<typeof fetchHandler, typeof DeclaredFetch.fetchHandler>,
  Same<typeof precompressor, typeof DeclaredFastify.precompressor>,
] = [true, true, true, true, true, true, true];
