// The public types of precompressor. lib/index.d.ts re-exports them with the functions; the code's
// JSDoc names them too, so `npm run typecheck` checks the implementation against what is shipped.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { EventEmitter } from 'node:events';

export type Encoding = 'br' | 'gzip' | 'zstd';
/** An encoding against a dictionary (RFC 9842 deploy deltas). */
export type DeltaEncoding = 'dcb' | 'dcz';

/** Options of `precompress(dir, options)`; the CLI flags map to them one to one. */
export interface PrecompressOptions {
  /** Encodings to write. Default `['br', 'gzip']`; add `'zstd'` for `.zst`. */
  encodings?: Encoding[];
  /** Brotli quality 0-11. Default 11. */
  brotliQuality?: number;
  /** gzip level 1-9. Default 9. */
  gzipLevel?: number;
  /** zstd level 1-19 (window capped at 8 MB for HTTP). Default 19. */
  zstdLevel?: number;
  /** Produce the gzip variants with zopfli (smaller, much slower). Default false. */
  zopfli?: boolean;
  /** Globs (relative to dir) of files to compress. Default `['**\/*']`. */
  include?: string | string[];
  /** Globs of files not to compress (still listed in the manifest). Default `[]`. */
  exclude?: string | string[];
  /** Extensions of already-compressed formats to skip; replaces the built-in list. */
  skipExtensions?: string | string[];
  /** Keep a variant only if compressed < original × minRatio (0 < minRatio ≤ 1). Default 1. */
  minRatio?: number;
  /** Compressions at once. Default `os.availableParallelism()`. */
  concurrency?: number;
  /** Manifest path (relative paths resolve against dir). Default `<dir>/precompressor-manifest.json`. */
  manifest?: string;
  /** Also take dot files and folders. Default false. */
  dotfiles?: boolean;
  /** Ignore the manifest and the variant cache and compress everything again (the cache is still filled). Default false. */
  force?: boolean;
  /** Report what would change; write nothing. Default false. */
  dryRun?: boolean;
  /** Compress `dir` even when it is `/`, the home folder (or one that holds it) or a system folder such as `/usr` or `/etc`, which are refused (`ERR_PRECOMPRESSOR_DIR`) by default. Default false. */
  allowSystemDir?: boolean;
  /** Files at or above this size (bytes) are streamed instead of read whole. Default 64 MiB. */
  streamThreshold?: number;
  /** Called at most every 100 ms while compressing (and when a long job starts); see `Progress.running`. */
  onProgress?: ((progress: Progress) => void) | null;
  /**
   * The variant cache: take each variant whose source content, encoding, settings and encoder
   * versions match one made before (by any build on any machine sharing the folder) instead of
   * encoding it again, and add new ones. Default true. See docs/cache.md.
   */
  cache?: boolean;
  /** The variant cache's folder. Default `node_modules/.cache/precompressor/variants` of the nearest package.json from the working directory (`$CACHE_DIR/precompressor/variants` when set; else the OS cache folder). */
  cacheDir?: string | null;
  /** The variant cache's cap, in bytes or a string such as `"512MB"`; least recently used entries are removed above it. Default 512 MiB. */
  cacheMaxSize?: number | string;
  /**
   * Compress only slice `"<i>/<n>"` of the files (balanced by expected work; the same slice on every
   * machine given the same tree and options) into the caches, and write no manifest, deltas or site
   * dictionary: a normal run after all n shards takes every variant from the cache. Default none. See docs/ci.md.
   */
  shard?: string | null;
  /**
   * A remote cache shared by machines, after the local folder: a server of Bazel's HTTP cache protocol
   * (bazel-remote, nginx with WebDAV PUT...). Default `PRECOMPRESSOR_CACHE_URL`, else none. A bearer
   * token comes only from `PRECOMPRESSOR_CACHE_TOKEN` (more headers: `PRECOMPRESSOR_CACHE_HEADERS`, a
   * JSON object). A remote that is down, slow or refusing never fails a build. See docs/cache.md.
   */
  cacheUrl?: string | null;
  /** Only read the remote cache (untrusted branches). Default false. */
  cacheUrlReadOnly?: boolean;
  /**
   * Deploy deltas (RFC 9842): record each eligible file's dictionary family and write `dcz`/`dcb`
   * deltas against the earlier versions of its family, where this Node can encode them. Default true.
   */
  deltas?: boolean;
  /**
   * A dictionary made from the site's HTML pages (RFC 9842), written as
   * `precompressor-dictionary.<hash>.dict`, and every page's `dcz`/`dcb` against it. Default true.
   */
  siteDictionary?: boolean;
  /** An older build folder whose files are also taken as earlier versions. Default none. */
  previous?: string | null;
  /** Where earlier versions are kept across builds. Default `node_modules/.cache/precompressor/dictionaries`, found like `cacheDir`. */
  dictionaryStore?: string | null;
  /** Earlier versions per family kept and used as dictionaries, 1-100. Default 3. */
  dictionaryVersions?: number;
  /** Smallest file (bytes) that gets deltas. Default 1024. */
  deltaMinSize?: number;
  /** A delta is kept only if smaller than the best ordinary variant × (1 − margin). Default 0.1. */
  deltaMargin?: number;
  /** Extensions that get deltas (array, or comma-separated). Default js, mjs, cjs, css, wasm, json, html, htm. */
  deltaExtensions?: string[] | string;
  /**
   * After each build, write the nginx (`http.conf`, `server.conf`) and Caddy (`precompressor.caddy`)
   * configurations of the folder into this folder, which must be outside it (docs/servers.md). Read by the
   * CLI (`--server-config`) and the plugins; `precompress()` checks it but writes none. Default none.
   */
  serverConfig?: string | null;
  /**
   * Where the hash is in a file name: a RegExp (or its source) with a named group `(?<hash>...)`, matched
   * against the base name; or a function of the file's path (POSIX, relative to the folder) returning the
   * hash's `[start, end)` in its base name, `null` for no hash, `undefined` for the default rule (the Vite
   * plugin passes one built from the bundle's names). Default: Vite/Rollup, webpack, esbuild, Astro and
   * SvelteKit names (8 base64url characters need no digit).
   */
  hashPattern?: RegExp | string | ((path: string) => [number, number] | null | undefined) | null;
}

export interface SiteDictionarySummary {
  /** The dictionary file, or null when there is none (too few pages, no gain, no encoder, turned off). */
  path: string | null;
  /** How it was made: `segments` (what the pages share), `page` (one page as it is), `previous` (the previous build's, kept), or `none`. */
  method: 'segments' | 'page' | 'previous' | 'none';
  /** Its bytes, and its smallest variant (what a visitor downloads once). */
  size: number;
  bytes: number;
  /** Pages with a variant against it; their smallest such variants' bytes against their best ordinary ones. */
  pages: number;
  pageBytes: number;
  ordinaryBytes: number;
  /** Page variants encoded in this run, and those reused from the previous one. */
  written: number;
  reused: number;
  /** Why there is none at all (no encoder), else null. */
  unavailable: string | null;
}

export interface DeltaSummary {
  /** The delta encodings this Node could make (`dcb`, `dcz`), probed at run time. */
  encoders: DeltaEncoding[];
  /** Files with a hashed name of their own (immutable: a browser keeps them as dictionaries) and at least one delta. */
  files: number;
  /** Files with deltas whose name has no hash: used only where they are served with a max-age. */
  unhashed: number;
  /** Files named only by a hash, paired by content, with deltas: used when the browser offers that very version. */
  byContent: number;
  written: number;
  reused: number;
  removed: number;
  /** Bytes of the `files`' smallest deltas against the newest earlier version. */
  bytes: number;
  /** What a returning visitor holding the newest earlier version saves on them, against the best ordinary variant. */
  savedBytes: number;
  /** Why there are no deltas at all (no encoder), else null. */
  unavailable: string | null;
}

export interface Progress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  /** Estimated CPU work done and total (arbitrary units), for an ETA. */
  workDone: number;
  workTotal: number;
  elapsedMs: number;
  /**
   * Files being compressed now (relative POSIX paths), in the order they started; `[]` when none.
   * A job expected to take more than about 0.1 s is announced as it starts, so one big file
   * among small ones shows here at once.
   */
  running: string[];
}

export interface Failure {
  /** POSIX path relative to dir (or an absolute path for the manifest). */
  path: string;
  code: string;
  message: string;
}

export interface Report {
  /** False when any file failed. */
  ok: boolean;
  root: string;
  manifest: string;
  dryRun: boolean;
  encodings: Encoding[];
  durationMs: number;
  files: {
    scanned: number;
    /** Files whose variants were encoded (at least one of them). */
    compressed: number;
    /** Files whose variants were all taken from the variant cache. */
    fromCache: number;
    unchanged: number;
    notSmaller: number;
    excluded: number;
    compressedFormat: number;
    empty: number;
    failed: number;
  };
  /** Bytes of all listed files, of those that have variants, and of the variants per encoding. */
  bytes: { original: number; compressible: number; br?: number; gzip?: number; zstd?: number };
  failures: Failure[];
  /**
   * Things the user should know that did not fail the run: symlinks leading outside, an unreadable
   * manifest, and files of the user's at a variant path (`X.gz` that precompressor did not write:
   * kept and served as itself, and X gets no such variant; see docs/user-files.md).
   */
  warnings: { path: string; message: string }[];
  /**
   * What was (or, with dryRun, would be) done: `compress`, `from cache`, `delta (dcb|dcz)` (`, from cache`),
   * `remove (stale|orphan|temp|stale delta)`. `skipped: 'not-smaller'` on a `compress` (or `from cache`) that kept
   * no variant (every encoding came out no smaller).
   */
  changes: { path: string; action: string; skipped?: 'not-smaller' }[];
  /** Deploy deltas of this run. */
  deltas: DeltaSummary;
  /** The site dictionary of this run. */
  siteDictionary: SiteDictionarySummary;
  /** The variant cache in this run: outputs (variants and deltas) taken from it and encoded, and the encode time the hits saved. */
  cache: CacheSummary;
  /** With `shard`: the slice this run compressed (no manifest was written). */
  shard?: ShardSummary;
}

export interface ShardSummary {
  /** From 1 to `count`. */
  index: number;
  count: number;
  /** Files in this slice, of `of` files to compress in all. */
  files: number;
  of: number;
  /** This slice's share of the whole expected work, 0-1. */
  share: number;
}

export interface CacheSummary {
  /** False with `cache: false` or `dryRun`. */
  enabled: boolean;
  dir: string;
  hits: number;
  misses: number;
  /** Entries that did not decode to their source (rewritten or damaged): removed, and counted in `misses`. */
  rejected: number;
  /** CPU time the hits' encodings took when they were made, in ms. */
  cpuSavedMs: number;
  /** With `cacheUrl`: the remote cache in this run. */
  remote?: RemoteCacheSummary;
}

export interface RemoteCacheSummary {
  /** The cache's URL without credentials. */
  url: string;
  /** Entries (variants and deltas the local cache lacked) fetched from it, and not found there. */
  hits: number;
  misses: number;
  /** Entries whose blob did not match their record (another length or SHA-256): not used. */
  rejected: number;
  /** Entries this run uploaded (what it encoded that the remote lacked). */
  uploaded: number;
  bytesIn: number;
  bytesOut: number;
  /** True with `cacheUrlReadOnly`, or after the server refused a write (401/403). */
  readOnly: boolean;
  /** Why the remote was left for the rest of the run (down, too slow, refusing), or null. */
  down: string | null;
}

export interface ManifestFileEntry {
  size: number;
  mtimeMs: number;
  /** `sha256-<base64url>` of the original. */
  hash: string;
  /** The variants that exist next to the file, keyed by encoding. */
  variants: Partial<Record<Encoding, { size: number }>>;
  skipped?: 'excluded' | 'compressed-format' | 'not-smaller' | 'empty';
  /** A content hash in its name (the bundler's record, or the name rule): served immutable, whatever its size. */
  hashed?: true;
  /** Schema 2: the file as a dictionary (`Use-As-Dictionary`). `hash`: SHA-256 in standard base64. */
  dictionary?: { hash: string; match: string; dest: string | null; hashed: boolean };
  /** Schema 2: deltas by the dictionary's SHA-256 (standard base64), at `<file>.<16 hex of it>.<dcb|dcz>`. */
  deltas?: Record<string, Partial<Record<DeltaEncoding, { size: number; hash: string }>>>;
}

export interface Manifest {
  schema: 1 | 2 | 3;
  tool: string;
  settings: Record<string, unknown> & { encodings: Encoding[] };
  generatedAt: string;
  files: Record<string, ManifestFileEntry>;
  /** Schema 3: the site dictionary (a listed file) that the pages' `deltas` are also made against. */
  siteDictionary?: { path: string; hash: string };
}

/** Options of `serveStatic(root, options)`: those of express.static plus a few. */
export interface ServeOptions {
  /** Manifest path, or false to serve stat-based without one. Default `<root>/precompressor-manifest.json`. */
  manifest?: string | false;
  /** Also serve files the manifest does not list (stat per request, identity only). Default false. */
  unlisted?: boolean;
  /** Server preference among equally acceptable encodings. Default `['br', 'zstd', 'gzip']`. */
  encodings?: Encoding[];
  /** Index file(s) of a folder, or false. Default `'index.html'`. */
  index?: string | string[] | false;
  /** Dotfile policy. Default `'ignore'`. */
  dotfiles?: 'ignore' | 'deny' | 'allow';
  /** Strong ETag from the content hash, per encoding. Default true. */
  etag?: boolean;
  /** Default true. */
  lastModified?: boolean;
  /** Send Cache-Control. Default true. */
  cacheControl?: boolean;
  /**
   * max-age in milliseconds, or a string read by `ms` like `'1d'`, `'2 days'`, `'1y'`, as express.static.
   * Clamped to [0, one year] (`Infinity` is one year). Default 0.
   */
  maxAge?: number | string | null;
  /** serve-static's lower-case spelling of `maxAge` (`maxAge` wins when both are set). */
  maxage?: number | string | null;
  /** Add `immutable` to Cache-Control. Default false. */
  immutable?: boolean;
  /** Honour Range requests (on the selected representation). Default true. */
  acceptRanges?: boolean;
  /** Set custom headers before a response is sent. */
  setHeaders?: ((res: ServerResponse, path: string, stat: { size: number; mtime: Date; mtimeMs: number }, encoding: string) => void) | null;
  /**
   * A miss or a rejected path calls next() (true), or next(err) with an http-errors object (false; other
   * methods then get 405). A 412 or 416 always goes to next(err), as with express.static. Default true.
   */
  fallthrough?: boolean;
  /** Redirect a folder path to its trailing-slash form. Default true. */
  redirect?: boolean;
  /** Extensions to try for extension-less paths, e.g. `['html']`. Default false. */
  extensions?: string[] | false;
  /**
   * Try `extensions` before a folder's redirect when both exist (`/about` answers `about.html` beside an
   * `about/` folder, as static hosts do: a Next.js export). Default false (express.static's order);
   * `precompressor serve` turns it on.
   */
  extensionsFirst?: boolean;
  /** SPA fallback: true for `index.html`, or a file to send for unknown paths that accept HTML. Default false. */
  spa?: boolean | string;
  /** Most bytes of bodies held in memory at once (representations up to memoryFileLimit, least recently used out). Default 16 MiB. */
  memoryBudget?: number;
  /** Largest representation held in memory (once sent); larger ones are streamed from disk. Default a quarter of memoryBudget (4 MiB). */
  memoryFileLimit?: number;
  /** Watch the served files and the manifest, reloading when they change. Default true. */
  watch?: boolean;
  /**
   * Deploy deltas and the site dictionary (RFC 9842): `Use-As-Dictionary` on files with a family and on the
   * site dictionary, its `Link` header on HTML pages, and the variants against a dictionary to browsers that
   * offer it. Default true.
   */
  dictionaries?: boolean;
  /** Files with a hash in their name (any size or type; `hashed` in the manifest) get `Cache-Control: public, max-age=31536000, immutable` (browsers keep only fresh dictionaries). Default true. */
  immutableHashed?: boolean;
  /** A larger manifest (or one that is not a regular file) is refused: thrown at startup, kept out on reload. Default 400 MiB. */
  maxManifestBytes?: number;
  /**
   * Told once, after start-up, when the folder does not match its manifest: files it does not list (HTML
   * first: a page written after the pass is a 404), variants whose size differs (another tool compressed
   * over ours: those files go out without that encoding), files changed since. Default `console.warn`;
   * `null` skips the check.
   */
  onWarning?: ((message: string) => void) | null;
}

export type NextFunction = (err?: unknown) => void;

export interface ServeStaticMiddleware {
  (req: IncomingMessage, res: ServerResponse, next?: NextFunction): void;
  /** Re-read the manifest; its paths are checked again as they are asked for. */
  reload(): Promise<void>;
  /** Resolves when reloads and first checks of paths under way have finished. */
  settled(): Promise<void>;
  /** Stop the watchers. */
  close(): void;
  /** Number of paths served from the manifest. */
  size(): number;
  /**
   * What is held now: bodies in memory (at most `memoryBudget` bytes) and entries built; and how many
   * files were hashed because their mtime alone moved (a deploy copy that kept whole seconds), and the
   * bytes kept of the manifest (what serving reads of it: no white space, no field it does not read),
   * and the request targets whose answers are remembered (a repeated request is not decided again).
   */
  memory(): { bodies: number; bodyBytes: number; entries: number; hashed: number; manifestBytes: number; hot: number };
}

/**
 * The response headers set before a reply, which `setHeaders` reads and sets: node's ServerResponse
 * for serveStatic; for `precompressor/fetch` and `precompressor/fastify`, a store of them that the reply joins.
 */
export interface ResponseHeaders {
  statusCode: number;
  getHeader(name: string): number | string | string[] | undefined;
  hasHeader(name: string): boolean;
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  removeHeader(name: string): void;
}

/** serveStatic's options for the adapters that are not node:http: `setHeaders` gets the response headers so far. */
export interface AdapterServeOptions extends Omit<ServeOptions, 'setHeaders'> {
  /** Called before each file response, as express.static's (it may set headers). Default `null`. */
  setHeaders?: ((headers: ResponseHeaders, path: string, stat: { size: number; mtime: Date; mtimeMs: number }, encoding: string) => void) | null;
}

/**
 * `fetchHandler(root, options)`: a Web fetch handler. Resolves to undefined for a request that is
 * not ours (a miss with `fallthrough`, another method), so the app goes on; rejects with a 500
 * error (http-errors) for a system error, and with the abort reason when the client went away.
 */
export interface FetchHandler {
  (request: Request): Promise<Response | undefined>;
  /** Re-read the manifest; its paths are checked again as they are asked for. */
  reload(): Promise<void>;
  /** Resolves when reloads and first checks of paths under way have finished. */
  settled(): Promise<void>;
  /** Stop the watchers. */
  close(): void;
  /** Number of paths served from the manifest. */
  size(): number;
  /** What is held now: bodies in memory (at most `memoryBudget` bytes) and entries built. */
  memory(): { bodies: number; bodyBytes: number; entries: number };
}

/** Options of `app.register(precompressor, options)` (`precompressor/fastify`): the folder and serveStatic's options. */
export interface FastifyPrecompressorOptions extends AdapterServeOptions {
  /** The folder to serve (compressed by `precompress()` first). */
  root: string;
  /** Fastify's own: the URL prefix the files are served under. */
  prefix?: string;
}

/** Options of `startPreview()`: the folder, where to listen, and serveStatic's options. */
export interface PreviewOptions extends ServeOptions {
  /** The folder to serve (compressed by `precompress()` first). */
  root: string;
  /** Port to listen on; 0 picks a free one. Default 0 (the CLI's `serve` defaults to 8080). */
  port?: number;
  /** Interface to listen on. Default `'127.0.0.1'`. */
  host?: string;
  /**
   * Close a socket with no progress for this long (reset within half a second after), a download its
   * client stopped reading included (ms or `'30s'`; 0: never). Default 30 s.
   */
  timeout?: number | string;
  /** The request head must arrive within this (node:http `headersTimeout`). Default 20 s. */
  headersTimeout?: number | string;
  /** The whole request must arrive within this (node:http `requestTimeout`). Default 30 s. */
  requestTimeout?: number | string;
  /** Close an idle kept-alive connection after this (node:http `keepAliveTimeout`). Default 5 s. */
  keepAliveTimeout?: number | string;
  /**
   * Connections open at once. At the cap a new one closes the connection idle longest (no request
   * being answered), or is closed itself when every other one is answering. Default 500.
   */
  maxConnections?: number;
}

export interface Preview {
  server: Server;
  /** The first of `urls`. */
  url: string;
  /** Where the server can be reached: one URL, or for 0.0.0.0 / :: localhost and each external address. */
  urls: string[];
  /** Close connections, the server and serveStatic's watchers. */
  close(): Promise<void>;
}

export interface WatchOptions extends PrecompressOptions {
  /** Quiet time (ms) after the last event before a batch runs. Default 100. */
  debounce?: number;
  /**
   * A file's size and mtime must stay unchanged this long (ms) before its event counts; until
   * then every batch leaves the file as it was (see `WatchBatch.held`). false turns both off.
   * Default 100.
   */
  awaitWriteFinish?: number | false;
  /** Poll instead of native events. Default false. */
  usePolling?: boolean;
}

/** The report of one watch batch: an incremental pass, plus the events that started it. */
export interface WatchBatch extends Report {
  events: { event: 'add' | 'change' | 'unlink' | 'unlinkDir'; path: string }[];
  /** True for the first pass, run when the watcher starts. */
  initial: boolean;
  /**
   * True when the batch was a whole pass over the folder (the first one, or one after events that
   * cannot be trusted: a folder removed, renamed or replaced, the watcher's error, 4,096 events or
   * more at once, the manifest written by another process). Otherwise it looked only at the paths of its events, and its
   * `files` and `bytes` count those files only.
   */
  whole: boolean;
  /**
   * Files still being written (events not settled for `awaitWriteFinish` ms), which this pass left
   * as they were: their manifest entry and variants as the previous pass left them, or none for a
   * new file. Not failures, not counted as compressed or unchanged; each is compressed by the batch
   * that its own settled event starts.
   */
  held: string[];
}

export interface Watcher extends EventEmitter {
  readonly root: string;
  readonly manifest: string;
  /** Resolves with the first pass's report once watching; rejects if the folder is missing or one of its folders cannot be watched (`ERR_PRECOMPRESSOR_WATCH`). */
  readonly ready: Promise<WatchBatch>;
  /** Stop watching after the batch in flight; the manifest then matches the files on disk. */
  close(): Promise<void>;
  on(event: 'batch', listener: (batch: WatchBatch) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

// ---- the Vite plugin (precompressor/vite) ----

/**
 * Compressor options: the same as `precompress(dir, options)` and the CLI flags (`manifest` resolves against outDir;
 * `cacheDir`, the variant cache that keeps variants across builds although Vite empties outDir, defaults to
 * `<Vite root>/node_modules/.cache/precompressor/variants` and `dictionaryStore`, the deploy-delta store, to
 * `<Vite root>/node_modules/.cache/precompressor/dictionaries`, both found from the Vite root like find-cache-dir).
 */
export type PrecompressorCompressOptions = PrecompressOptions;

/** serveStatic options accepted by `preview` (see the serveStatic section of the README). */
export type PrecompressorPreviewServeOptions = ServeOptions;

export interface PrecompressorViteOptions extends PrecompressorCompressOptions {
  /** Also compress the output of SSR builds / server environments. Default `false`. */
  ssr?: boolean;
  /** Serve the variants in `vite preview` through serveStatic; `false` to leave preview alone. Default `true`. */
  preview?: boolean | PrecompressorPreviewServeOptions;
  /** Log one line per compressed or removed file, besides the summary. Default `false`. */
  verbose?: boolean;
}
