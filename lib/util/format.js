// Pure text formatting for the CLI: sizes, durations, the progress line and the summary.

/** Characters a terminal acts on or that reorder a line: C0, DEL, C1, line and paragraph separators, bidi controls. */
// eslint-disable-next-line no-control-regex -- matching them is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT = /** @type {Record<string, string>} */ ({ '\n': '\\n', '\r': '\\r', '\t': '\\t' });

/**
 * `s` with every control character escaped, for a line a person reads: a file name cannot recolour
 * the terminal or forge a line of its own. Machine output (`--json`) stays exact.
 * @param {string} s
 */
export function printable(s) {
  return String(s).replace(UNPRINTABLE, (c) => SHORT[c] ?? escapeOf(c.charCodeAt(0)));
}

/** `\x1b` below 0x100, else `\u202e`. @param {number} code */
function escapeOf(code) {
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * @param {number} n
 * @param {number} base
 * @param {string[]} units
 */
function scaled(n, base, units) {
  if (n < base) return `${n} B`;
  let v = n;
  let i = -1;
  do {
    v /= base;
    i++;
  } while (v >= base && i < units.length - 1);
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[i]}`;
}

/**
 * 53100 → "53.1 kB" (decimal units, as compressors and browsers' network panels report).
 * @param {number} n
 */
export const formatBytes = (n) => scaled(n, 1000, ['kB', 'MB', 'GB', 'TB']);

/**
 * 536870912 → "512 MiB", as the cache's sizes are given.
 * @param {number} n
 */
export const formatBinaryBytes = (n) => scaled(n, 1024, ['KiB', 'MiB', 'GiB', 'TiB']);

/**
 * 1234 → "1.2 s"; 75000 → "1 min 15 s".
 * @param {number} ms
 */
export function formatDuration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/**
 * @param {number} part
 * @param {number} whole
 */
function percent(part, whole) {
  return whole === 0 ? '0%' : `${((part / whole) * 100).toFixed(1)}%`;
}

/** Longest path shown on the progress line; a longer one keeps its end ("…/assets/index.js"). */
const RUNNING_MAX = 40;

/**
 * What runs now, for the progress line: " · assets/big.js", with "+N" when N more run, or ''.
 * @param {readonly string[] | undefined} running
 */
export function runningText(running) {
  if (!running || running.length === 0) return '';
  const first = printable(running[0]);
  const shown = first.length > RUNNING_MAX ? `…${first.slice(first.length - RUNNING_MAX + 1)}` : first;
  return ` · ${shown}${running.length > 1 ? ` +${running.length - 1}` : ''}`;
}

/**
 * One progress line: bar, files, bytes, ETA (from the estimated CPU work done), what runs now.
 * @typedef {{ filesDone: number, filesTotal: number, bytesDone: number, bytesTotal: number,
 *   workDone: number, workTotal: number, elapsedMs: number, running?: readonly string[] }} Progress
 * @param {Progress} p
 * @param {number} [width] bar width in characters
 */
export function formatProgress(p, width = 24) {
  const frac = p.workTotal === 0 ? 1 : Math.min(1, p.workDone / p.workTotal);
  const filled = Math.round(frac * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const eta = frac > 0.02 && frac < 1 ? ` ETA ${formatDuration((p.elapsedMs / frac) * (1 - frac))}` : '';
  const bytes = `${formatBytes(p.bytesDone)}/${formatBytes(p.bytesTotal)}`;
  return `${bar} ${percent(frac, 1)} ${p.filesDone}/${p.filesTotal} files ${bytes}${eta}${runningText(p.running)}`;
}

/**
 * What the summary reads of a run's report (declared here: the contract imports no folder).
 * @typedef {{ root: string, dryRun: boolean, durationMs: number, encodings: string[],
 *   files: { scanned: number, compressed: number, fromCache?: number, unchanged: number, compressedFormat: number,
 *     notSmaller: number, excluded: number, empty: number, failed: number },
 *   bytes: Record<string, number> & { original: number, compressible: number },
 *   changes: { path: string, action: string }[],
 *   deltas?: { files: number, written: number, bytes: number, savedBytes: number, unhashed?: number,
 *     byContent?: number, unavailable: string | null },
 *   siteDictionary?: SiteDictionaryReport,
 *   cache?: { enabled: boolean, dir: string, hits: number, misses: number, cpuSavedMs: number,
 *     remote?: { url: string, hits: number, misses: number, uploaded: number, down: string | null } },
 *   shard?: { index: number, count: number, files: number, of: number, share: number } }} SummaryReport
 * @typedef {{ path: string | null, size: number, bytes: number, pages: number, pageBytes: number,
 *   ordinaryBytes: number, unavailable: string | null }} SiteDictionaryReport
 */

/**
 * @param {{ files: number, written: number, bytes: number, savedBytes: number, unhashed?: number,
 *   byContent?: number, unavailable: string | null } | undefined} d
 */
export function deltaLine(d) {
  if (!d) return '';
  if (d.unavailable) return `deltas: none (${d.unavailable})`;
  const unhashed = d.unhashed ?? 0;
  const byContent = d.byContent ?? 0;
  if (d.files === 0 && unhashed === 0 && byContent === 0) return '';
  const parts = [`deltas: ${d.files} servable ${d.files === 1 ? 'file' : 'files'} (${d.written} written)`];
  if (d.files > 0) {
    const without = formatBytes(d.bytes + d.savedBytes);
    parts.push(`a returning visitor downloads ${formatBytes(d.bytes)} instead of ${without} for them`);
  }
  // made, but a browser keeps or offers these dictionaries only in some cases: not counted as servable
  if (unhashed > 0) parts.push(`${unhashed} more for unhashed names (used only where served with a max-age)`);
  if (byContent > 0) parts.push(`${byContent} more paired by content (used when the browser offers that version)`);
  return parts.join('; ');
}

/**
 * @param {SiteDictionaryReport | undefined} d
 */
export function siteDictionaryLine(d) {
  if (!d) return '';
  if (d.unavailable) return `site dictionary: none (${d.unavailable})`;
  if (d.path === null || d.pages === 0) return '';
  return `site dictionary: ${formatBytes(d.size)} (${formatBytes(d.bytes)} sent once); ` +
    `${d.pages} pages after it at ${percent(d.pageBytes, d.ordinaryBytes)} of their best variant`;
}

/**
 * @param {{ enabled: boolean, hits: number, misses: number, cpuSavedMs: number } | undefined} c
 */
export function cacheLine(c) {
  if (!c?.enabled || c.hits === 0) return '';
  return `cache: ${c.hits} of ${c.hits + c.misses} outputs from the cache, ` +
    `${formatDuration(c.cpuSavedMs)} of CPU saved`;
}

/**
 * The end-of-run summary (several lines, no trailing newline).
 * @param {SummaryReport} r
 */
export function formatSummary(r) {
  const f = r.files;
  const lines = [];
  const verb = r.dryRun ? 'would compress' : 'compressed';
  const dry = r.dryRun ? ' [dry run]' : '';
  lines.push(`precompressor: ${f.scanned} files in ${printable(r.root)} (${formatDuration(r.durationMs)})${dry}`);
  lines.push(
    `  ${verb} ${r.dryRun ? r.changes.filter((c) => c.action === 'compress').length : f.compressed}, ` +
      `${f.fromCache ? `from cache ${f.fromCache}, ` : ''}unchanged ${f.unchanged}; ` +
      `skipped: ${f.compressedFormat} compressed format, ${f.notSmaller} not smaller, ` +
      `${f.excluded} excluded, ${f.empty} empty` +
      (f.failed ? `; ${f.failed} failed` : ''),
  );
  if (!r.dryRun) {
    const { bytes } = r;
    const size = (/** @type {string} */ e) => bytes[e] ?? 0;
    const parts = r.encodings.map((e) => `${e} ${formatBytes(size(e))} (${percent(size(e), bytes.compressible)})`);
    const of = `${formatBytes(bytes.compressible)} compressible of ${formatBytes(bytes.original)}`;
    lines.push(`  ${of} → ${parts.join(' · ')}`);
  } else {
    for (const c of r.changes) lines.push(`  ${c.action}: ${printable(c.path)}`);
  }
  const deltas = deltaLine(r.deltas);
  if (deltas) lines.push(`  ${deltas}`);
  const site = siteDictionaryLine(r.siteDictionary);
  if (site) lines.push(`  ${site}`);
  const cache = cacheLine(r.cache);
  if (cache) lines.push(`  ${cache}`);
  const remote = r.cache?.remote;
  if (remote) {
    lines.push(`  remote cache ${printable(remote.url)}: ${remote.hits} of ${remote.hits + remote.misses} ` +
      `fetched, ${remote.uploaded} uploaded${remote.down === null ? '' : ' (not used: see the warning)'}`);
  }
  if (r.shard) {
    const { index, count, files, of, share } = r.shard;
    lines.push(`  shard ${index}/${count}: ${files} of ${of} files to compress, ${percent(share, 1)} of the work; ` +
      'into the cache only (no manifest: run without --shard after every shard)');
  }
  return lines.join('\n');
}
