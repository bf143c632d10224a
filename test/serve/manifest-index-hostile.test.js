import { ManifestIndex, runIndex } from '../../lib/serve/manifest-index.js';
import { manifestText } from '../../lib/manifest.js';

// The server indexes a manifest's lines before validating them (lib/serve/line-scan.js): what a
// hostile line or a hostile set of file names can do to that index.

const ENTRY = { size: 1, mtimeMs: 1, hash: 'sha256-x', variants: {} };

/**
 * The index of a manifest in writeManifest()'s layout listing `rels`.
 * @param {string[]} rels
 */
function indexOf(rels) {
  const files = Object.fromEntries([...rels].sort().map((r) => [r, ENTRY]));
  const m = { schema: 3, tool: 't', settings: {}, generatedAt: '', files };
  return runIndex(ManifestIndex.of(Buffer.from([...manifestText(m)].join('')), 'm', null));
}

test('names made to collide under FNV-1a from its offset basis do not collide in the index', () => {
  // Two pairs of 7-byte blocks of one FNV-1a hash each from the offset basis, chained: four names
  // of one hash. 2^k such names from k pairs made the index probe past every other (quadratic start-up).
  const names = ['7yzlaaa0rjvaaa', '7yzlaaahpfxaaa', 'e6apaaa0rjvaaa', 'e6apaaahpfxaaa'].map((n) => `${n}.txt`);
  const index = indexOf(names);
  expect(new Set(index.lines.hashes.subarray(0, 4)).size).toBe(4);
  for (const n of names) expect(index.has(n)).toBe(true);
});

test('a line whose path is invalid adds no folder (none outside the root is watched)', () => {
  const index = indexOf(['ok/a.txt', '../outside/x.txt', '/abs/x.txt', 'a/../../up/x.txt', 'back\\slash/x.txt']);
  expect([...index.dirs].sort()).toEqual(['', 'ok']);
  // escaped in the JSON, parsed by the scan
  const escaped = indexOf(['\u0001ctl/x.txt', 'ok2/b.txt']);
  expect([...escaped.dirs].sort()).toEqual(['', 'ok2']);
});
