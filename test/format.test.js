import { formatBytes, formatBinaryBytes, formatDuration, formatProgress, formatSummary, printable, runningText, siteDictionaryLine } from '../lib/util/format.js';
import { batchLines } from '../lib/cli/watch.js';

test('sizes and durations', () => {
  expect(formatBytes(999)).toBe('999 B');
  expect(formatBytes(1000)).toBe('1.00 kB');
  expect(formatBytes(53_100)).toBe('53.1 kB');
  expect(formatBytes(2_280_000)).toBe('2.28 MB');
  expect(formatBytes(412_000_000)).toBe('412 MB');
  // the cache's sizes, in the unit its docs and its default use (it said "cap 537 MB" for 512 MiB)
  expect(formatBinaryBytes(1023)).toBe('1023 B');
  expect(formatBinaryBytes(1536)).toBe('1.50 KiB');
  expect(formatBinaryBytes(512 * 1024 * 1024)).toBe('512 MiB');
  expect(formatBinaryBytes(3 * 1024 ** 3)).toBe('3.00 GiB');
  expect(formatDuration(12.4)).toBe('12 ms');
  expect(formatDuration(1234)).toBe('1.2 s');
  expect(formatDuration(75_000)).toBe('1 min 15 s');
});

test('the progress line has a bar, files, bytes and an ETA from the work done', () => {
  const line = formatProgress({ filesDone: 3, filesTotal: 10, bytesDone: 1_000_000, bytesTotal: 4_000_000, workDone: 25, workTotal: 100, elapsedMs: 2000 }, 8);
  expect(line).toBe('██░░░░░░ 25.0% 3/10 files 1.00 MB/4.00 MB ETA 6.0 s');
  const done = formatProgress({ filesDone: 10, filesTotal: 10, bytesDone: 5, bytesTotal: 5, workDone: 100, workTotal: 100, elapsedMs: 2000 }, 4);
  expect(done).toBe('████ 100.0% 10/10 files 5 B/5 B');
});

test('the progress line names the file running longest, and how many more run', () => {
  const p = { filesDone: 7, filesTotal: 8, bytesDone: 1_000_000, bytesTotal: 4_000_000, workDone: 25, workTotal: 100, elapsedMs: 2000 };
  expect(formatProgress({ ...p, running: ['assets/big.js'] }, 0)).toBe(' 25.0% 7/8 files 1.00 MB/4.00 MB ETA 6.0 s · assets/big.js');
  expect(formatProgress({ ...p, running: ['assets/big.js', 'a.css', 'b.css'] }, 0)).toMatch(/ · assets\/big\.js \+2$/);
  expect(formatProgress({ ...p, running: [] }, 0)).toBe(' 25.0% 7/8 files 1.00 MB/4.00 MB ETA 6.0 s');
  const long = `assets/${'x'.repeat(60)}/index.js`;
  expect(formatProgress({ ...p, running: [long] }, 0)).toMatch(/ · …x+\/index\.js$/);
  expect(formatProgress({ ...p, running: [long] }, 0).split(' · ')[1]).toHaveLength(40);
});

test('the summary names counts, skip reasons and bytes per encoding', () => {
  const report = {
    root: '/site', dryRun: false, durationMs: 1100, encodings: ['br', 'gzip'], changes: [],
    files: { scanned: 40, compressed: 35, unchanged: 0, notSmaller: 3, excluded: 0, compressedFormat: 1, empty: 1, failed: 0 },
    bytes: { original: 266_000, compressible: 244_000, br: 53_100, gzip: 63_500 },
  };
  expect(formatSummary(report)).toBe(
    'precompressor: 40 files in /site (1.1 s)\n' +
      '  compressed 35, unchanged 0; skipped: 1 compressed format, 3 not smaller, 0 excluded, 1 empty\n' +
      '  244 kB compressible of 266 kB → br 53.1 kB (21.8%) · gzip 63.5 kB (26.0%)',
  );
  const dry = formatSummary({ ...report, dryRun: true, changes: [{ path: 'a.js', action: 'compress' }, { path: 'old.js.br', action: 'remove (orphan)' }] });
  expect(dry.split('\n').slice(1)).toEqual(['  would compress 1, unchanged 0; skipped: 1 compressed format, 3 not smaller, 0 excluded, 1 empty', '  compress: a.js', '  remove (orphan): old.js.br']);
});

test('the site-dictionary line: the dictionary, what it costs once, and the pages against it', () => {
  const d = { path: 'precompressor-dictionary.0123456789abcdef.dict', size: 119_365, bytes: 7_778, pages: 150, pageBytes: 441_216, ordinaryBytes: 1_424_884, unavailable: null };
  expect(siteDictionaryLine(d)).toBe('site dictionary: 119 kB (7.78 kB sent once); 150 pages after it at 31.0% of their best variant');
  expect(siteDictionaryLine({ ...d, path: null, pages: 0 })).toBe('');
  expect(siteDictionaryLine({ ...d, path: null, unavailable: 'Node v20.0.0 has no zstd or Brotli encoder that takes a dictionary' }))
    .toBe('site dictionary: none (Node v20.0.0 has no zstd or Brotli encoder that takes a dictionary)');
  expect(siteDictionaryLine(undefined)).toBe('');
});

describe('control characters in names are escaped in every line a person reads (#17)', () => {
  const evil = 'x\x1b[31m\r\nerror: forged\u009b\u202e.js';
  const shown = 'x\\x1b[31m\\r\\nerror: forged\\x9b\\u202e.js';

  test('printable()', () => {
    expect(printable(evil)).toBe(shown);
    expect(printable('\t\0\x7f')).toBe('\\t\\x00\\x7f');
    expect(printable('plain/ünï 日本.js')).toBe('plain/ünï 日本.js');
  });

  test('the progress line, the summary and the dry run', () => {
    expect(runningText([evil])).toBe(` · ${shown}`);
    const r = {
      root: `/tmp/${evil}`, dryRun: true, durationMs: 5, encodings: ['br'], changes: [{ path: evil, action: 'compress' }],
      files: { scanned: 1, compressed: 0, unchanged: 0, compressedFormat: 0, notSmaller: 0, excluded: 0, empty: 0, failed: 0 },
      bytes: { original: 1, compressible: 1 },
    };
    const text = formatSummary(r);
    expect(text).toContain(`/tmp/${shown}`);
    expect(text).toContain(`compress: ${shown}`);
    for (const c of ['\x1b', '\r', '\u009b', '\u202e']) expect(text).not.toContain(c);
    expect(text.split('\n')).toHaveLength(3);
  });

  test('the watch log', () => {
    const batch = { changes: [{ path: evil, action: 'compress' }], failures: [{ path: evil, message: `${evil} changed` }], warnings: [{ path: evil, message: 'w' }] };
    const { out, err } = batchLines(batch, { time: 'T' });
    expect(out).toEqual([`T compressed ${shown}`]);
    expect(err).toEqual([`T error: ${shown}: ${shown} changed`, `T warning: ${shown}: w`]);
  });
});
