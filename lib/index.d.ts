// The public API: the functions and the error class (test/types/drift.ts checks each against its
// implementation); every type is in ./types.d.ts.
import type {
  PrecompressOptions, Report, ServeOptions, ServeStaticMiddleware, PreviewOptions, Preview, WatchOptions, Watcher,
} from './types.js';

export * from './types.js';

/**
 * Compress every eligible file under `dir`, remove stale variants, write the manifest.
 * Rejects with a PrecompressorError for bad options or a missing folder; per-file failures are in
 * `report.failures`.
 */
export function precompress(dir: string, options?: PrecompressOptions): Promise<Report>;

/**
 * The manifest-driven replacement for express.static. Throws a TypeError for a missing or non-string root
 * (as express.static), and a PrecompressorError for an invalid manifest, or a missing one without `unlisted`.
 */
export function serveStatic(root: string, options?: ServeOptions | null): ServeStaticMiddleware;

/** serveStatic on node:http, as `precompressor serve` runs it. Rejects when the port is taken or the manifest is missing. */
export function startPreview(options: PreviewOptions): Promise<Preview>;

/** Compress `dir`, then recompress what changes until closed. */
export function watch(dir: string, options?: WatchOptions): Watcher;

export class PrecompressorError extends Error {
  /** Stable: ERR_PRECOMPRESSOR_OPTION, _DIR, _FILE, _MANIFEST, _ENCODING. */
  code: string;
  path?: string;
}
