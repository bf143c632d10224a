import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { serveStatic } from '../../lib/serve/adapters/middleware.js';

/**
 * @typedef {{ origin: string, seen: { url: string, headers: import('node:http').IncomingHttpHeaders }[], close: () => Promise<void> }} Served
 *   seen: the requests the server got (empty when it runs in another process)
 */

/**
 * serveStatic on Express, on 127.0.0.1:`port` (0: any), for the browser tests: origin on
 * `localhost` (a secure context, where Chromium stores dictionaries) and the requests it saw.
 * @param {string} dist
 * @param {number} [port]
 * @returns {Promise<Served>}
 */
export async function expressServer(dist, port = 0) {
  const mw = serveStatic(dist, { watch: false });
  /** @type {Served['seen']} */
  const seen = [];
  const app = express();
  app.use((req, _res, next) => {
    seen.push({ url: req.url, headers: req.headers });
    next();
  });
  app.use(mw);
  const server = http.createServer(app);
  await new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(undefined)));
  const close = async () => {
    mw.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
  };
  return { origin: `http://localhost:${/** @type {any} */ (server.address()).port}`, seen, close };
}

const VITE_RUN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'vite-run.js');

/**
 * `vite preview` of `root` (its `dist`) with the plugin (serveStatic inside), in its own process
 * (test/helpers/vite-run.js), on `port` (0: any).
 * @param {string} root
 * @param {number} port
 * @param {object} plugin the plugin's options
 * @returns {Promise<Served & { port: number }>}
 */
export async function startVitePreview(root, port, plugin) {
  const job = { mode: 'preview', root, port, plugin, config: { logLevel: 'warn' } };
  const child = spawn(process.execPath, [VITE_RUN, JSON.stringify(job)], { env: process.env, stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`vite preview exited with ${code}`)));
  });
  const close = () => new Promise((resolve) => {
    child.once('close', () => resolve(undefined));
    child.stdin.end();
  });
  const p = JSON.parse(line).port;
  return { origin: `http://localhost:${p}`, port: p, seen: [], close };
}

/** CDP header objects with lower-case names. @param {Record<string, string>} h */
export function lower(h) {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * @typedef {{ url?: string, sent?: Record<string, string>, headers?: Record<string, string>, wire?: number }} Seen
 *   one request as the DevTools protocol saw it: headers really sent, response headers, bytes on the wire
 */

/** A fail-safe far above the normal time (milliseconds) for a request's DevTools events to come. */
const EVENTS_MS = 30_000;

/**
 * Launch Chromium (puppeteer-core) with a profile of its own and one page whose network traffic is
 * recorded into `net` (by request id); `onFinished` sees each request as its body has arrived.
 * `complete(match, need)` resolves with the request whose URL passes `match` once the parts `need`
 * (by default the headers sent, the response and its end) have come: the DevTools protocol sends
 * them apart (the headers really sent may come after the response, even after the page's load
 * event), so a test reads a request only once what it reads is there.
 * @param {string} executablePath
 * @param {string} userDataDir
 * @param {(r: Seen) => void} [onFinished]
 */
export async function recordedBrowser(executablePath, userDataDir, onFinished = () => {}) {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    userDataDir,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP localhost 127.0.0.1'],
  });
  const page = await browser.newPage();
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  /** @type {Map<string, Seen>} */
  const net = new Map();
  /** @type {Set<() => void>} */
  const waiters = new Set();
  /** @param {string} id @param {(r: Seen) => void} set */
  const record = (id, set) => {
    set(/** @type {Seen} */ (net.get(id) ?? net.set(id, {}).get(id)));
    for (const w of [...waiters]) w();
  };
  cdp.on('Network.requestWillBeSent', (e) => record(e.requestId, (r) => void (r.url = e.request.url)));
  cdp.on('Network.requestWillBeSentExtraInfo', (e) => record(e.requestId, (r) => void (r.sent = lower(e.headers))));
  cdp.on('Network.responseReceived', (e) => record(e.requestId, (r) => void (r.headers = lower(e.response.headers))));
  cdp.on('Network.loadingFinished', (e) => record(e.requestId, (r) => {
    r.wire = e.encodedDataLength;
    onFinished(r);
  }));
  /**
   * @param {(url: string) => boolean} match
   * @param {('sent' | 'headers' | 'wire')[]} [need] a blocked response (a 404 as a script) has no end
   * @returns {Promise<Seen>}
   */
  const complete = (match, need = ['sent', 'headers', 'wire']) => new Promise((resolve, reject) => {
    const check = () => {
      const r = [...net.values()].find((x) => x.url !== undefined && match(x.url) && need.every((k) => x[k] !== undefined));
      if (r === undefined) return;
      waiters.delete(check);
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      const seen = [...net.values()].filter((x) => x.url !== undefined && match(x.url));
      reject(new Error(`no complete request within ${EVENTS_MS} ms; matching: ${JSON.stringify(seen)}`));
    }, EVENTS_MS);
    waiters.add(check);
    check();
  });
  return { browser, page, net, complete };
}
