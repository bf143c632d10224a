import http from 'node:http';
import os from 'node:os';
import { serveStatic } from './middleware.js';
import { previewLimits } from '../http/index.js';
import { Connections } from './connections.js';
import { StallWatch } from './stall-watch.js';

/**
 * The URLs a server listening on `host`:`port` can be reached at (pure). A specific host gives
 * one URL; the wildcard addresses (0.0.0.0, ::) give localhost and then every external address of
 * the machine that they cover: IPv4 for 0.0.0.0, IPv4 and IPv6 for :: (dual stack). IPv6
 * link-local addresses (fe80::/10) are left out, as they need a zone id no URL carries portably.
 * @param {string} host
 * @param {number} port
 * @param {NodeJS.Dict<os.NetworkInterfaceInfo[]>} [interfaces] os.networkInterfaces()
 */
export function previewUrls(host, port, interfaces = {}) {
  const url = (/** @type {string} */ h) => `http://${h.includes(':') ? `[${h}]` : h}:${port}/`;
  if (host !== '0.0.0.0' && host !== '::') return [url(host)];
  const urls = [url('localhost')];
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      const linkLocal = /^fe[89ab]/i.test(a.address);
      if (a.family === 'IPv4' || (host === '::' && a.family === 'IPv6' && !linkLocal)) urls.push(url(a.address));
    }
  }
  return [...new Set(urls)];
}

/**
 * Preview a built site with serveStatic on node:http (`precompressor serve <dir>`).
 * Misses get a plain 404, bad paths 400/403, other methods 405.
 * @param {import('../../types.js').PreviewOptions} options
 *   port 0 (default) picks a free port; host defaults to 127.0.0.1; the limits are PREVIEW_LIMITS';
 *   the rest goes to serveStatic
 * @returns {Promise<import('../../types.js').Preview>}
 *   `url` is the first of `urls` (see previewUrls())
 */
export async function startPreview({
  root, port = 0, host = '127.0.0.1', timeout, headersTimeout, requestTimeout, keepAliveTimeout, maxConnections,
  ...serveOptions
}) {
  const limits = previewLimits({ timeout, headersTimeout, requestTimeout, keepAliveTimeout, maxConnections });
  const mw = serveStatic(root, serveOptions);
  const server = http.createServer({
    headersTimeout: limits.headersTimeout,
    requestTimeout: limits.requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeout,
    // how often the head and request deadlines are checked: Node's 30 s let them run that much late
    connectionsCheckingInterval: 1000,
  });
  const connections = new Connections(server, limits.maxConnections);
  server.on('request', (req, res) => {
    if (connections.admit(req, res)) mw(req, res);
  });
  // the watch alone: node:http's own timer (server.timeout) is later for stalled downloads
  const watch = limits.timeout > 0 ? new StallWatch(server, limits.timeout) : null;
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(undefined);
      });
    });
  } catch (err) {
    mw.close();
    watch?.close();
    throw err;
  }
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  const urls = previewUrls(host, address.port, os.networkInterfaces());
  const close = () => new Promise((resolve) => {
    mw.close();
    watch?.close();
    server.closeAllConnections();
    server.close(() => resolve(undefined));
  });
  return { server, url: urls[0], urls, close: /** @type {() => Promise<void>} */ (close) };
}
