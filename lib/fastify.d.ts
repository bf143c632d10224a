import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPrecompressorOptions } from './types.js';

export type { AdapterServeOptions, FastifyPrecompressorOptions, ResponseHeaders } from './types.js';

/**
 * `app.register(precompressor, { root, ...serveStatic options })`: serves the folder's files and their
 * precompressed variants through Fastify's reply, on a GET/HEAD wildcard route under the prefix (the
 * app's own routes win; a path that is not a file goes to the not-found handler). Throws (at
 * `ready()`) a TypeError for a missing root and a PrecompressorError for an invalid manifest.
 */
export declare const precompressor: FastifyPluginAsync<FastifyPrecompressorOptions>;
export default precompressor;
