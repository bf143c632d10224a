// Small helpers shared by the benchmarks: timing a child process with its peak RSS, checking
// system tools, counting output bytes, printing Markdown tables, describing the machine.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execFile, spawn, spawnSync } from 'node:child_process';

/** True when `name` is an executable on PATH. */
export function hasCommand(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Check system tools; returns the missing ones with the line that installs them.
 * @param {string[]} names
 */
export function missingTools(names) {
  const missing = names.filter((n) => (n.startsWith('/') ? !fs.existsSync(n) : !hasCommand(n)));
  return missing;
}

export const APT_HINT = 'apt-get install -y brotli gzip time hyperfine wrk nginx-light libnginx-mod-http-brotli-static';

/** Busy CPU seconds of the whole machine so far (all cores, from /proc/stat), or null. */
export function machineBusyS() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    const busy = f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] || 0);
    return busy / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/**
 * Run a command to completion under /usr/bin/time; returns wall seconds (measured here, from
 * spawn to exit), the peak RSS in MB of the largest single process of the tree (GNU time %M,
 * i.e. getrusage of the waited-for children), its CPU seconds (user + sys), the CPU seconds
 * that the rest of the machine used meanwhile (`otherCpuS`: other processes compete for the
 * cores and make the figures unreliable), the exit code and the tail of stderr.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, timeoutMs?: number }} [opts]
 */
export async function timed(cmd, args, opts = {}) {
  const timeFile = path.join(os.tmpdir(), `bench-time-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const busy0 = machineBusyS();
  const started = process.hrtime.bigint();
  const child = spawn('/usr/bin/time', ['-f', '%M %U %S', '-o', timeFile, cmd, ...args], {
    cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out = (out + d).slice(-64 * 1024); });
  child.stderr.on('data', (d) => { err = (err + d).slice(-8 * 1024); });
  const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : null;
  const code = await new Promise((resolve) => child.on('close', (c, sig) => resolve(c ?? sig)));
  if (timer) clearTimeout(timer);
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  const busy1 = machineBusyS();
  let rssMB = null;
  let cpuS = null;
  try {
    const [kb, u, sy] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    if (Number.isFinite(kb)) rssMB = kb / 1024;
    if (Number.isFinite(u + sy)) cpuS = u + sy;
  } catch { /* time did not write: the command could not start */ }
  fs.rmSync(timeFile, { force: true });
  const otherCpuS = busy0 === null || busy1 === null || cpuS === null ? null : Math.max(0, busy1 - busy0 - cpuS);
  return { wallS, rssMB, cpuS, otherCpuS, code, stdout: out, stderr: err.replace(/^Command exited with non-zero status \d+\n?/m, '').trim() };
}

/** A fresh copy of `src` at `dest` (removed first). */
export async function freshCopy(src, dest) {
  await fsp.rm(dest, { recursive: true, force: true });
  await fsp.cp(src, dest, { recursive: true });
  // Write the copy out before the clock starts: otherwise the kernel flushes it during the
  // contender's run, which is the benchmark's own cost, not the contender's.
  await new Promise((resolve) => execFile('sync', () => resolve(undefined)));
}

/**
 * Every regular file under `dir` as POSIX relative path → size.
 * @param {string} dir
 */
export async function sizesUnder(dir) {
  const map = new Map();
  for (const d of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!d.isFile()) continue;
    const abs = path.join(d.parentPath ?? d.path, d.name);
    map.set(path.relative(dir, abs).split(path.sep).join('/'), (await fsp.stat(abs)).size);
  }
  return map;
}

/**
 * The `.br` and `.gz` variants found under `dir` for the given sources: per-file sizes and totals.
 * @param {string} dir
 * @param {Iterable<string>} sources POSIX paths relative to dir
 */
export async function variantBytes(dir, sources) {
  const sizes = await sizesUnder(dir);
  const br = new Map();
  const gz = new Map();
  for (const rel of sources) {
    if (sizes.has(`${rel}.br`)) br.set(rel, sizes.get(`${rel}.br`));
    if (sizes.has(`${rel}.gz`)) gz.set(rel, sizes.get(`${rel}.gz`));
  }
  const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  return { br, gz, brBytes: sum(br), gzBytes: sum(gz), brFiles: br.size, gzFiles: gz.size };
}

/** Median of a non-empty list of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * A GitHub-flavoured Markdown table.
 * @param {string[]} headers
 * @param {(string | number | null)[][]} rows
 * @param {string} [align] one of 'l'/'r' per column
 */
export function markdownTable(headers, rows, align = '') {
  const cell = (v) => (v === null || v === undefined ? '—' : String(v).replace(/\|/g, '\\|').replace(/\n/g, ' '));
  const sep = headers.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [headers, sep, ...rows.map((r) => r.map(cell))].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

/** Machine description for the results. */
export function machineInfo() {
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memGB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/**
 * The scheduling priority the processes a benchmark starts inherit: its nice value and, on Linux
 * with autogroups (kernel.sched_autogroup_enabled), its session's autogroup. There nice only orders
 * the threads of one session: against other sessions' load it is the autogroup's nice that counts
 * (docs/benchmarks.md, "Rebuild from the cache: a second thread, again").
 */
export function schedulingInfo() {
  let group = null;
  try {
    group = fs.readFileSync('/proc/self/autogroup', 'utf8').trim();
  } catch {
    // not Linux, or no autogroups
  }
  return `nice ${os.getPriority()}${group === null ? '' : `, ${group}`}`;
}

/** Format bytes with thousands separators. */
export const fmtInt = (n) => (n === null || n === undefined ? null : Math.round(n).toLocaleString('en-US'));
/** Format a number with `d` decimals. */
export const fmt = (n, d = 2) => (n === null || n === undefined || !Number.isFinite(n) ? null : n.toFixed(d));

/**
 * Wait until the machine is quiet (under `maxBusy` of all cores busy for `quietS` seconds in a
 * row) or `maxWaitS` has passed. Returns the seconds waited and whether it was quiet. On a
 * shared machine this keeps other processes' work out of the measurement when it can.
 * @param {{ maxWaitS?: number, quietS?: number, maxBusy?: number }} [opts]
 */
export async function waitForQuiet({ maxWaitS = 120, quietS = 2, maxBusy = 0.1 } = {}) {
  const cores = os.availableParallelism();
  const start = Date.now();
  let quiet = 0;
  while ((Date.now() - start) / 1000 < maxWaitS) {
    const b0 = machineBusyS();
    if (b0 === null) return { waitedS: 0, quiet: false };
    await new Promise((r) => setTimeout(r, 1000));
    quiet = (machineBusyS() - b0) / cores < maxBusy ? quiet + 1 : 0;
    if (quiet >= quietS) return { waitedS: (Date.now() - start) / 1000, quiet: true };
  }
  return { waitedS: (Date.now() - start) / 1000, quiet: false };
}
