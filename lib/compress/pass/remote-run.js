import pLimit from 'p-limit';
import { sha256 } from '../../manifest/manifest.js';
import { absPath } from '../../paths.js';
import { zlibOptions } from '../encoders/index.js';
import { brotliModeFor } from '../plan/index.js';
import { hashFile } from '../variants/index.js';
import { cacheKey } from '../cache/index.js';
import { storeDescriptor, storeOf } from '../cache/index.js';
import { HttpCache } from '../cache/index.js';
import { decodeActionResult, encodeActionResult } from '../cache/index.js';

/**
 * The remote cache's part in one pass, the local store staying the first level: what it lacks is
 * fetched into it before the compressions (then proven like any entry), what the run encoded uploaded after.
 *
 * @typedef {import('../cache/index.js').RemoteRecord} RemoteRecord
 * @typedef {{ url: string, hits: number, misses: number, rejected: number, uploaded: number,
 *   bytesIn: number, bytesOut: number, readOnly: boolean, down: string | null }} RemoteSummary
 */

/**
 * The key of a file's variant, exactly as the workers compute it (a test checks the two agree).
 * @param {string} hash the source's content hash
 * @param {number} size
 * @param {string} rel
 * @param {import('../../encodings.js').Encoding} encoding
 * @param {import('../../options.js').Options} opts
 */
export function variantKey(hash, size, rel, encoding, opts) {
  const { brotliQuality, gzipLevel, zstdLevel, zopfli } = opts;
  const params = { brotliQuality, gzipLevel, zstdLevel, zopfli, mode: brotliModeFor(rel), size };
  return cacheKey('variant', hash, [encoding, zlibOptions(encoding, params)]);
}

/**
 * The remote side of a pass, or null when there is no remote (no `cacheUrl`, the cache off, a dry run).
 * @param {import('../../options.js').Options} opts
 */
export function createRemoteRun(opts) {
  if (opts.cacheUrl === null || !opts.cache || opts.dryRun) return null;
  return new RemoteRun(opts);
}

/** A store read for an entry's record only, or its bytes, neither marking it used (the pass marks what it takes). */
const ONLY_RECORD = Object.freeze({ below: 0, touchOlderThan: 0 });
const NOT_MARKED = Object.freeze({ touchOlderThan: 0 });

export class RemoteRun {
  /**
   * @type {Map<string, string | null | undefined>} keys to upload after the pass → what the remote holds: the
   *   SHA-256 of its blob (null: a not-smaller record), undefined when nothing
   */
  wanted = new Map();
  stats = { hits: 0, misses: 0, rejected: 0, uploaded: 0 };

  /** @param {import('../../options.js').Options} opts */
  constructor(opts) {
    this.opts = opts;
    this.local = storeOf(storeDescriptor(opts));
    this.http = new HttpCache(/** @type {string} */ (opts.cacheUrl), {
      headers: opts.cacheHeaders, readOnly: opts.cacheUrlReadOnly,
    });
  }

  /**
   * Fetch into the local cache the variants of `files` it lacks (none with `force`).
   * @param {import('../plan/index.js').WalkEntry[]} files
   * @param {(rel: string) => readonly import('../../encodings.js').Encoding[]} encodingsOf
   * @returns {Promise<number>} bytes added to the local cache
   */
  async prefetch(files, encodingsOf) {
    const io = pLimit(this.http.o.concurrency * 2);
    let written = 0;
    await Promise.all(files.map((f) => io(async () => {
      if (this.http.down !== null) return;
      const at = { abs: absPath(this.opts.root, f.rel), dev: f.dev, ino: f.ino, link: f.link };
      const h = await hashFile(at.abs, this.opts.streamThreshold, at).catch(() => null);
      if (h === null) return; // the pass meets and reports it
      await Promise.all(encodingsOf(f.rel).map(async (enc) => {
        const key = variantKey(h.hash, h.size, f.rel, enc, this.opts);
        if (!this.opts.force && (await this.local.get(key, ONLY_RECORD)) !== null) return;
        const got = this.opts.force ? null : await this.entry(key);
        if (got === null) {
          this.wanted.set(key, undefined);
          return;
        }
        this.wanted.set(key, got.rec.sha256);
        written += await this.keep(key, got);
      }));
    })));
    return written;
  }

  /**
   * The entry of `key` on the remote, its bytes checked against its record; null on a miss. They still
   * have to decode to the source before use.
   * @param {string} key
   * @param {boolean} [count] in the run's figures (false: the dictionary index, not an output)
   * @returns {Promise<{ rec: RemoteRecord, data: Buffer | null } | null>}
   */
  async entry(key, count = true) {
    const stats = count ? this.stats : { hits: 0, misses: 0, rejected: 0 };
    const ac = await this.http.get('ac', key);
    const rec = ac === null ? null : decodeActionResult(ac, key);
    const data = rec?.sha256 ? await this.http.get('cas', rec.sha256) : null;
    const intact = rec !== null && (rec.sha256 === null ||
      (data !== null && data.length === rec.bytes && sha256(data, 'hex') === rec.sha256));
    if ((ac !== null && rec === null) || (data !== null && !intact)) stats.rejected++;
    if (rec === null || !intact) {
      stats.misses++;
      return null;
    }
    stats.hits++;
    return { rec, data };
  }

  /**
   * Add a remote entry to the local cache; the bytes written (0 when it could not be).
   * @param {string} key
   * @param {{ rec: RemoteRecord, data: Buffer | null }} got
   */
  keep(key, got) {
    // When it cannot be stored, the pass encodes it (and says why the cache could not be written).
    return this.local.put(key, got.data, { size: got.rec.size, encodeMs: got.rec.encodeMs }).catch(() => 0);
  }

  /**
   * Upload the local entry of `key` (blob, then record), unless the remote holds those very bytes.
   * @param {string} key
   * @param {string | null} [remoteSha] what the remote holds for it (see `wanted`), undefined when nothing
   * @param {Buffer | null} [bytes] the entry's bytes, when in hand
   */
  async store(key, remoteSha = undefined, bytes = null) {
    if (this.http.readOnly || this.http.down !== null) return;
    const local = await this.local.get(key, bytes === null ? NOT_MARKED : ONLY_RECORD);
    if (local === null || (remoteSha !== undefined && local.sha256 === remoteSha)) return;
    const data = local.sha256 === null ? null : bytes ?? local.bytes;
    if (local.sha256 !== null && (data === null || sha256(data, 'hex') !== local.sha256)) return;
    const rec = { key, size: local.size, bytes: data?.length ?? 0, encodeMs: local.encodeMs, sha256: local.sha256 };
    if (data !== null && !(await this.http.put('cas', /** @type {string} */ (local.sha256), data))) return;
    if (await this.http.put('ac', key, encodeActionResult(rec))) this.stats.uploaded++;
  }

  /** Upload what the pass encoded that the remote lacked. */
  async upload() {
    const jobs = [];
    for (const [key, remoteSha] of this.wanted) jobs.push(this.store(key, remoteSha));
    this.wanted.clear();
    await Promise.all(jobs);
  }

  /**
   * The remote's lines for the report (it went down, it refused a write, entries rejected), once.
   * @param {{ warn(path: string, message: string): void }} report
   */
  finish(report) {
    for (const note of this.http.notes) report.warn(this.http.url, note);
    this.http.notes = [];
    if (this.stats.rejected > 0) {
      report.warn(this.http.url, `${this.stats.rejected} remote cache entries did not match their record: not used`);
    }
    this.stats.rejected = 0;
  }

  /** Close its connections (again: nothing to do). */
  close() {
    this.http.close();
  }

  /** @returns {RemoteSummary} */
  summary() {
    const { hits, misses, rejected, uploaded } = this.stats;
    const { url, bytesIn, bytesOut, readOnly, down } = this.http;
    return { url, hits, misses, rejected, uploaded, bytesIn, bytesOut, readOnly, down };
  }
}
