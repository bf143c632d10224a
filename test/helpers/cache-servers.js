import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';

/**
 * Remote cache servers for the tests: nginx with WebDAV PUT, as Bazel's documentation sets it up
 * (the real server, started unprivileged on a free port with a temp prefix), and a small
 * in-process server of the same protocol only for what nginx cannot be made to do: be slow, answer
 * 500, cut bodies short, drop connections, refuse writes.
 */

/** Why nginx with the dav module cannot run here, or null when it can. */
export function nginxDavMissing() {
  const r = spawnSync('nginx', ['-V'], { encoding: 'utf8' });
  if (r.error) return `nginx is not installed (${r.error.message}); apt-get install nginx-light`;
  return /--with-http_dav_module/.test(`${r.stdout}${r.stderr}`) ? null : 'this nginx has no dav module';
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once `url` answers at all (any status). @param {string} url */
async function answering(url, child) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      http.get(url, (res) => {
        res.resume();
        res.on('end', () => resolve(true));
      }).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * nginx serving `root` with `dav_methods PUT` and `create_full_put_path on`: a Bazel HTTP cache.
 * @param {string} prefix a temp folder of its own (config, logs, temp files, and the cache under `store/`)
 * @returns {Promise<{ url: string, store: string, close: () => Promise<void> }>}
 */
export async function startNginxDav(prefix) {
  const store = path.join(prefix, 'store');
  await fs.mkdir(path.join(prefix, 'tmp'), { recursive: true });
  await fs.mkdir(store, { recursive: true });
  const port = await freePort();
  const tmp = (/** @type {string} */ name) => `${name}_temp_path ${path.join(prefix, 'tmp', name)};`;
  const conf = `daemon off; master_process off; worker_processes 1;
pid ${prefix}/nginx.pid; error_log ${prefix}/error.log warn;
events { worker_connections 256; }
http {
  access_log off; log_not_found off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(tmp).join('\n  ')}
  client_max_body_size 0;
  server {
    listen 127.0.0.1:${port};
    root ${store};
    location / {
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw;
    }
  }
}
`;
  await fs.writeFile(path.join(prefix, 'nginx.conf'), conf);
  const child = spawn('nginx', ['-p', prefix, '-e', path.join(prefix, 'error.log'), '-c', path.join(prefix, 'nginx.conf')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await answering(url, child);
  const close = async () => {
    if (child.exitCode !== null) return;
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGQUIT');
    await closed;
  };
  return { url, store, close };
}

/**
 * @typedef {{ slowMs?: number, status?: number, truncate?: boolean, drop?: boolean, hang?: boolean,
 *   refuseWrites?: boolean }} Faults what the server does to every request while set
 */

/**
 * A Bazel HTTP cache in this process, with faults on demand (`faults`, changed at any time), the
 * blobs in `blobs` (`ac/<hex>`, `cas/<hex>`: a test may rewrite them) and the requests seen.
 * @returns {Promise<{ url: string, blobs: Map<string, Buffer>, faults: Faults,
 *   seen: { method: string, url: string, headers: http.IncomingHttpHeaders }[], close: () => Promise<void> }>}
 */
export async function startFaultyCache() {
  /** @type {Map<string, Buffer>} */
  const blobs = new Map();
  /** @type {Faults} */
  const faults = {};
  /** @type {{ method: string, url: string, headers: http.IncomingHttpHeaders }[]} */
  const seen = [];
  const server = http.createServer(async (req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    if (faults.hang) return; // never answers
    if (faults.drop) {
      req.socket.destroy();
      return;
    }
    if (faults.slowMs) await new Promise((resolve) => setTimeout(resolve, faults.slowMs));
    if (faults.status) {
      res.writeHead(faults.status).end('fault');
      return;
    }
    const m = /^\/(ac|cas)\/([0-9a-f]{64})$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(400).end();
      return;
    }
    const name = `${m[1]}/${m[2]}`;
    if (req.method === 'PUT') {
      if (faults.refuseWrites) {
        res.writeHead(403).end();
        return;
      }
      if (m[1] === 'cas' && crypto.createHash('sha256').update(body).digest('hex') !== m[2]) {
        res.writeHead(400).end('hash mismatch');
        return;
      }
      blobs.set(name, body);
      res.writeHead(200).end();
      return;
    }
    const blob = blobs.get(name);
    if (blob === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': blob.length, 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') res.end();
    else if (faults.truncate && blob.length > 1) {
      res.write(blob.subarray(0, blob.length >> 1), () => res.socket?.destroy());
    } else res.end(blob);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
  };
  return { url: `http://127.0.0.1:${port}`, blobs, faults, seen, close };
}
