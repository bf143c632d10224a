// nginx and Caddy as unprivileged processes of the test, on free ports of 127.0.0.1, each with a
// temp prefix of its own, serving a folder with only the generated configuration files included.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

export const NGINX_BROTLI = '/usr/lib/nginx/modules/ngx_http_brotli_static_module.so';

/** Why `server` cannot run here, or null. @param {'nginx' | 'caddy'} server */
export function missing(server) {
  const probe = spawnSync(server, [server === 'nginx' ? '-v' : 'version'], { stdio: 'ignore' });
  if (probe.error) return `no ${server} on PATH (apt-get install ${server === 'nginx' ? 'nginx-light libnginx-mod-http-brotli-static' : 'caddy'})`;
  if (server === 'nginx' && !fs.existsSync(NGINX_BROTLI)) return `no ${NGINX_BROTLI} (apt-get install libnginx-mod-http-brotli-static)`;
  return null;
}

/** A port free now on 127.0.0.1 (the server binds it right after). */
async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {net.AddressInfo} */ (srv.address());
  await new Promise((resolve) => srv.close(() => resolve(undefined)));
  return port;
}

/** Resolves once `port` accepts a connection, rejects when the child exits first. */
function listening(child, port, log) {
  return new Promise((resolve, reject) => {
    let done = false;
    child.once('exit', (code) => {
      if (!done) reject(new Error(`exited with ${code} before listening: ${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`));
      done = true;
    });
    const attempt = () => {
      if (done) return;
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        done = true;
        resolve(undefined);
      });
      s.once('error', () => setTimeout(attempt, 20));
    };
    attempt();
  });
}

/**
 * Start `server` on `root` with the configuration files in `conf` (written by precompressor config).
 * @param {'nginx' | 'caddy'} server
 * @param {string} root
 * @param {string} conf
 * @param {string} work a temp folder for the server's own files
 * @returns {Promise<{ port: number, origin: string, close: () => Promise<void> }>}
 */
export async function startServer(server, root, conf, work) {
  const prefix = await fsp.mkdtemp(path.join(work, `${server}-`));
  const port = await freePort();
  const log = path.join(prefix, 'error.log');
  let child;
  if (server === 'nginx') {
    for (const d of ['tmp']) await fsp.mkdir(path.join(prefix, d));
    const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${prefix}/tmp/${t};`).join(' ');
    await fsp.writeFile(path.join(prefix, 'nginx.conf'), `load_module ${NGINX_BROTLI};
daemon off; master_process off; worker_processes 1; pid ${prefix}/nginx.pid; error_log ${log} warn;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types; default_type application/octet-stream; access_log off; ${temps}
  include ${conf}/http.conf;
  server { listen 127.0.0.1:${port}; root ${root}; include ${conf}/server.conf; }
}
`);
    child = spawn('nginx', ['-p', prefix, '-e', log, '-c', path.join(prefix, 'nginx.conf')], { stdio: 'ignore' });
  } else {
    await fsp.writeFile(path.join(prefix, 'Caddyfile'), `{
\tadmin off
\tauto_https off
\tstorage file_system ${prefix}/data
}
http://127.0.0.1:${port}, http://localhost:${port} {
\troot * ${root}
\timport ${conf}/precompressor.caddy
}
`);
    const env = { ...process.env, HOME: prefix, XDG_DATA_HOME: prefix, XDG_CONFIG_HOME: prefix };
    const out = fs.openSync(log, 'w');
    child = spawn('caddy', ['run', '--config', path.join(prefix, 'Caddyfile'), '--adapter', 'caddyfile'], { stdio: ['ignore', out, out], env });
    fs.closeSync(out);
  }
  await listening(child, port, log);
  const close = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
    child.once('exit', () => resolve(undefined));
    child.kill('SIGTERM');
  });
  return { port, origin: `http://localhost:${port}`, close };
}
