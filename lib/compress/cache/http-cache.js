import { createRequire } from 'node:module';
import pLimit from 'p-limit';

// node:http and node:https are required when a remote is used: an ESM import of either reads every
// export (loading Node's fetch, undici), which cost every build without a remote cache ~35 ms of CPU.
const require = createRequire(import.meta.url);

/**
 * A client of Bazel's HTTP cache protocol (`/ac/`, `/cas/`): it never throws and never makes a build
 * wait long on a bad server, which it leaves for the rest of the run with one line (docs/cache.md).
 */

/** @typedef {{ status: number, body: Buffer }} Response */

/**
 * What a pass's remote offers the rest of the pass (the deltas, the dictionary store): an entry by key,
 * an upload, the client (lib/compress/pass/remote-run.js is the one implementation).
 * @typedef {{
 *   http: HttpCache,
 *   entry(key: string, count?: boolean):
 *     Promise<{ rec: import('./action-result.js').RemoteRecord, data: Buffer | null } | null>,
 *   store(key: string, remoteSha?: string | null, bytes?: Buffer | null): Promise<void>,
 * }} RemoteEntries
 */

export const REMOTE_DEFAULTS = Object.freeze({
  concurrency: 16, timeoutMs: 2000, slowMs: 1000, slowLimit: 8, retries: 2,
});

const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const RETRY_CODES = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED', 'ETRUNCATED']);

/**
 * @param {string} url
 */
export function shownUrl(url) {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(invalid URL)';
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class HttpCache {
  /** @type {string | null} why the remote is off for the rest of this run */
  down = null;
  /** @type {string[]} one line per change of state, for the report's warnings */
  notes = [];
  slow = 0;
  requests = 0;
  bytesIn = 0;
  bytesOut = 0;

  /**
   * @param {string} url the cache's base URL (http or https; a user name and password in it are sent as Basic)
   * @param {{ headers?: Record<string, string>, readOnly?: boolean } & Partial<typeof REMOTE_DEFAULTS>} [o]
   */
  constructor(url, o = {}) {
    const u = new URL(url);
    this.url = shownUrl(url);
    this.secure = u.protocol === 'https:';
    this.base = { hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || (this.secure ? 443 : 80) };
    this.prefix = u.pathname.replace(/\/+$/, '');
    this.o = { ...REMOTE_DEFAULTS, ...o };
    /** @type {Record<string, string>} */
    this.headers = { ...o.headers };
    if (u.username !== '') {
      const creds = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
      this.headers.authorization ??= `Basic ${Buffer.from(creds).toString('base64')}`;
    }
    this.readOnly = o.readOnly === true;
    /** @type {typeof import('node:http') | typeof import('node:https')} */
    this.mod = require(this.secure ? 'node:https' : 'node:http');
    this.agent = new this.mod.Agent({ keepAlive: true, maxSockets: this.o.concurrency });
    this.limit = pLimit(this.o.concurrency);
  }

  /**
   * The blob of `kind`/`hash`, or null (a miss, or the remote is down).
   * @param {'ac' | 'cas'} kind
   * @param {string} hash 64 hex
   * @returns {Promise<Buffer | null>}
   */
  async get(kind, hash) {
    const r = await this.request('GET', kind, hash);
    return r !== null && r.status === 200 ? r.body : null;
  }

  /**
   * Is `kind`/`hash` there? False when not, or when the remote is down.
   * @param {'ac' | 'cas'} kind
   * @param {string} hash
   */
  async has(kind, hash) {
    const r = await this.request('HEAD', kind, hash);
    return r !== null && r.status === 200;
  }

  /**
   * Store `body` as `kind`/`hash`; false when it was not (read-only, refused, down).
   * @param {'ac' | 'cas'} kind
   * @param {string} hash
   * @param {Buffer} body
   */
  async put(kind, hash, body) {
    if (this.readOnly) return false;
    const r = await this.request('PUT', kind, hash, body);
    if (r === null) return false;
    if (r.status === 401 || r.status === 403) {
      if (!this.readOnly) {
        this.readOnly = true;
        this.notes.push(`remote cache ${this.url} refused a write (${r.status}): read-only for the rest of this run`);
      }
      return false;
    }
    return r.status >= 200 && r.status < 300;
  }

  /**
   * One request, tried again on a passing failure; null when the remote is (or just went) down.
   * @param {'GET' | 'HEAD' | 'PUT'} method
   * @param {'ac' | 'cas'} kind
   * @param {string} hash
   * @param {Buffer} [body]
   * @returns {Promise<Response | null>}
   */
  request(method, kind, hash, body) {
    return this.limit(async () => {
      for (let attempt = 0; ; attempt++) {
        if (this.down !== null || (method === 'PUT' && this.readOnly)) return null;
        const started = performance.now();
        /** @type {Response | null} */
        let r = null;
        /** @type {any} */
        let error = null;
        try {
          this.requests++;
          if (body) this.bytesOut += body.length;
          const headers = { ...this.headers, ...(body ? { 'content-length': String(body.length),
            'content-type': 'application/octet-stream' } : {}) };
          const options = { ...this.base, method, path: `${this.prefix}/${kind}/${hash}`, headers, agent: this.agent };
          r = await exchange(this.mod, options, body, this.o.timeoutMs);
          this.bytesIn += r.body.length;
        } catch (err) {
          error = err;
        }
        if (this.down !== null) return null;
        if (performance.now() - started > this.o.slowMs && ++this.slow >= this.o.slowLimit) {
          return this.goDown(`too slow: ${this.slow} requests took over ${this.o.slowMs} ms`);
        }
        const status = r?.status ?? 0;
        const passing = error ? RETRY_CODES.has(error.code) : RETRY_STATUS.has(status);
        if (passing && attempt < this.o.retries) {
          await sleep(50 * 4 ** attempt);
          continue;
        }
        if (error) {
          return this.goDown(error.code === 'ETIMEDOUT' ? `no answer within ${this.o.timeoutMs} ms` : error.message);
        }
        if (status >= 500 || status === 429 || status === 408) return this.goDown(`HTTP ${status}`);
        if (method !== 'PUT' && (status === 401 || status === 403)) return this.goDown(`HTTP ${status} on a read`);
        return r;
      }
    });
  }

  /**
   * @param {string} why
   * @returns {null}
   */
  goDown(why) {
    if (this.down === null) {
      this.down = why;
      this.notes.push(`remote cache ${this.url} not used for the rest of this run (${why}); ` +
        'going on with the local cache');
      this.agent.destroy();
    }
    return null;
  }

  /** Close the kept-alive connections. */
  close() {
    this.agent.destroy();
  }
}

/**
 * One HTTP exchange; rejects on a network error, no progress for `timeoutMs` (code ETIMEDOUT) or a
 * body shorter than its Content-Length (ETRUNCATED).
 * @param {typeof import('node:http') | typeof import('node:https')} mod
 * @param {import('node:http').RequestOptions} options
 * @param {Buffer | undefined} body
 * @param {number} timeoutMs
 * @returns {Promise<Response>}
 */
function exchange(mod, options, body, timeoutMs) {
  const cut = () => Object.assign(new Error('response cut short'), { code: 'ETRUNCATED' });
  return new Promise((resolve, reject) => {
    const req = mod.request(options, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      let got = 0;
      res.on('data', (c) => {
        chunks.push(c);
        got += c.length;
      });
      res.on('error', reject);
      res.on('aborted', () => reject(cut()));
      res.on('end', () => {
        const length = res.headers['content-length'];
        if (options.method !== 'HEAD' && length !== undefined && got !== Number(length)) reject(cut());
        else resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks, got) });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}
