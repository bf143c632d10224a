import type { Plugin } from 'vite';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Compressor options: the same as `precompress(dir, options)` and the CLI flags. */
export interface PrecompressorCompressOptions {
  /** Encodings to write. Default `['br', 'gzip']`. */
  encodings?: Array<'br' | 'gzip' | 'zstd'>;
  /** Brotli quality 0–11. Default `11`. */
  brotliQuality?: number;
  /** gzip level 1–9. Default `9`. */
  gzipLevel?: number;
  /** Globs (relative to outDir) of files to compress. Default `['**\/*']`. */
  include?: string | string[];
  /** Globs of files not to compress (still listed in the manifest). Default `[]`. */
  exclude?: string | string[];
  /** Extensions of already-compressed formats to skip; replaces the built-in list. */
  skipExtensions?: string | string[];
  /** Keep a variant only if compressed < original × minRatio (0 < minRatio ≤ 1). Default `1`. */
  minRatio?: number;
  /** Files compressed at once. Default `os.availableParallelism()`. */
  concurrency?: number;
  /** Manifest path, relative to outDir. Default `'precompressor-manifest.json'`. */
  manifest?: string;
  /** Also take files and folders whose name starts with a dot (e.g. `.vite/manifest.json`). Default `false`. */
  dotfiles?: boolean;
  /** Ignore the manifest cache and compress everything again. Default `false`. */
  force?: boolean;
  /** Say what would change without writing anything. Default `false`. */
  dryRun?: boolean;
  /** Files at or above this many bytes are streamed. Default 64 MiB. */
  streamThreshold?: number;
  /** Progress callback. Default none. */
  onProgress?: ((progress: { filesDone: number; filesTotal: number; bytesDone: number; bytesTotal: number; workDone: number; workTotal: number; elapsedMs: number }) => void) | null;
}

/** serveStatic options accepted by `preview` (see the serveStatic section of the README). */
export interface PrecompressorPreviewServeOptions {
  encodings?: Array<'br' | 'zstd' | 'gzip'>;
  index?: string | string[] | false;
  etag?: boolean;
  lastModified?: boolean;
  cacheControl?: boolean;
  maxAge?: number | string;
  immutable?: boolean;
  setHeaders?: ((res: ServerResponse<IncomingMessage>, path: string, stat: { size: number; mtime: Date; mtimeMs: number }, encoding: string) => void) | null;
  [option: string]: unknown;
}

export interface PrecompressorViteOptions extends PrecompressorCompressOptions {
  /** Also compress the output of SSR builds / server environments. Default `false`. */
  ssr?: boolean;
  /**
   * Keep the variants of files whose content did not change across builds, although Vite empties
   * outDir before each build (they are parked in `<cacheDir>/precompressor/` meanwhile). Default `true`.
   */
  cache?: boolean;
  /** Serve the variants in `vite preview` through serveStatic; `false` to leave preview alone. Default `true`. */
  preview?: boolean | PrecompressorPreviewServeOptions;
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}

/** Plugin-only options and their defaults. */
export declare const VITE_DEFAULTS: Readonly<{ ssr: false; cache: true; preview: true; verbose: false }>;

/**
 * `plugins: [precompressor(options)]`: compresses the client build output after Vite wrote it
 * (public/ files included) and serves the variants in `vite preview`.
 * Throws a PrecompressorError (`ERR_PRECOMPRESSOR_OPTION`) for a bad option.
 */
export default function precompressor(options?: PrecompressorViteOptions): Plugin;
export { precompressor };
