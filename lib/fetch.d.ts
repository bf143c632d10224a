import type { AdapterServeOptions, FetchHandler } from './types.js';

export type { AdapterServeOptions, FetchHandler, ResponseHeaders } from './types.js';

/**
 * serveStatic as a Web fetch handler (Hono, Bun.serve, Deno.serve): `await handler(request)` is a
 * Response, or undefined when the request is not ours and the app goes on. Throws a TypeError for a
 * missing root and a PrecompressorError for an invalid manifest, as serveStatic.
 */
export function fetchHandler(root: string, options?: AdapterServeOptions | null): FetchHandler;
