import http from 'node:http';
import { serveStatic } from './middleware.js';

/**
 * Preview a built site with serveStatic on node:http (`precompressor serve <dir>`).
 * Misses get a plain 404, bad paths 400/403, other methods 405.
 * @param {{ root: string, port?: number, host?: string } & Record<string, unknown>} options
 *   port 0 (default) picks a free port; host defaults to 127.0.0.1; the rest goes to serveStatic
 * @returns {Promise<{ server: http.Server, url: string, close: () => Promise<void> }>}
 */
export async function startPreview({ root, port = 0, host = '127.0.0.1', ...serveOptions }) {
  const mw = serveStatic(root, serveOptions);
  const server = http.createServer((req, res) => mw(req, res));
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
    throw err;
  }
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${address.port}/`;
  const close = () => new Promise((resolve) => {
    mw.close();
    server.closeAllConnections();
    server.close(() => resolve(undefined));
  });
  return { server, url, close: /** @type {() => Promise<void>} */ (close) };
}
