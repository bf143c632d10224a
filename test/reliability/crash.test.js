// kill -9 the real CLI at 20 random moments on a real multi-MB corpus (files copied from
// installed packages), with the default settings (Brotli 11, gzip 9, all cores).
//
// - 10 kills during a run from scratch (no variant, no manifest yet): every .br/.gz present under
//   its final name must decode to its current original; the manifest is absent (or complete, if
//   the kill came after it was written).
// - 10 kills during incremental runs after a quarter of the files were rewritten: every .br/.gz
//   must decode to its current original or to the version before the rewrite (not redone yet), and
//   the manifest on disk must be valid and never vouch for a variant that does not match: for each
//   entry whose hash is the current original's, each listed variant decodes to that original.
// - 5 kills during runs from scratch that fill an empty variant cache: the same checks, and every
//   entry in the cache must be whole (record, size and SHA-256 of its bytes), whatever the moment.
// After every kill, the next run must complete (exit 0) and leave everything consistent.
// The first two kinds run with --no-cache (a cache would make the runs after the first too short
// to kill); the third is the cache's own.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { lookupSync, readBytesSync } from '../../lib/compress/cache/entry-files.js';
import {
  BIN, MANIFEST, buildRealCorpus, checkConsistent, decodedHash, hashFileStreamed, listTree, record, runCli,
} from './helpers.js';

const CORPUS_BYTES = 4 * 1024 * 1024;
const KILLS_PER_KIND = 10;
const STARTUP_MS = 150;
const CACHE_KILLS = 5;

/** Every entry of the variant cache is whole (a killed writer leaves at most a temp file); returns how many. */
function expectWholeCache(dir) {
  if (!fs.existsSync(dir)) return 0;
  const entries = fs.readdirSync(dir, { recursive: true }).map(String).filter((p) => /^[0-9a-f]{2}[\\/][0-9a-f]{64}$/.test(p));
  const broken = entries.filter((p) => {
    const entry = lookupSync(dir, path.basename(p));
    return entry === null || (entry.bytes > 0 && readBytesSync(entry) === null);
  });
  expect(broken).toEqual([]);
  return entries.length;
}

let root;
afterAll(async () => {
  if (root) await Promise.all([root, `${root}-cache`].map((d) => fsp.rm(d, { recursive: true, force: true })));
});

/** Deterministic pseudo-random numbers in [0, 1). */
function rng(seed) {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** Start the CLI, SIGKILL it after `delayMs` (if it is still running); resolves with what happened. */
function runAndKill(dir, delayMs, flags) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, dir, '--quiet', ...flags], { env: process.env, stdio: 'ignore' });
    let killed = false;
    const timer = setTimeout(() => {
      killed = child.kill('SIGKILL');
    }, delayMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ killed: killed && signal === 'SIGKILL', code });
    });
  });
}

async function removeOutputs(dir) {
  for (const rel of await listTree(dir)) {
    if (rel === MANIFEST || /\.(br|gz|pctmp)$/.test(rel)) await fsp.rm(path.join(dir, rel));
  }
}

/** sha256 hex of each original, keyed by relative path. */
async function hashesOf(dir, files) {
  const out = new Map();
  for (const rel of files) out.set(rel, await hashFileStreamed(path.join(dir, rel)));
  return out;
}

/**
 * The invariants after a kill. `allowed` maps each original to the set of hashes a variant may
 * decode to (current, and before this round's rewrite).
 */
async function afterKill(dir, current, allowed) {
  const problems = [];
  const all = await listTree(dir);
  let variants = 0;
  for (const rel of all) {
    const m = /^(.*)\.(br|gz)$/.exec(rel);
    if (!m || !current.has(m[1])) continue;
    variants++;
    const h = await decodedHash(path.join(dir, rel));
    if (h === null || !allowed.get(m[1]).has(h)) problems.push(`${rel}: decodes to ${h === null ? 'nothing (corrupt)' : 'another content'}`);
  }
  let manifest = 'absent';
  if (all.includes(MANIFEST)) {
    try {
      const doc = JSON.parse(await fsp.readFile(path.join(dir, MANIFEST), 'utf8'));
      manifest = [1, 2, 3].includes(doc.schema) && typeof doc.files === 'object' ? 'valid' : 'invalid';
      for (const [rel, e] of Object.entries(doc.files ?? {})) {
        const hex = current.get(rel);
        if (hex === undefined || e.hash !== `sha256-${Buffer.from(hex, 'hex').toString('base64url')}`) continue;
        for (const enc of Object.keys(e.variants)) {
          const file = path.join(dir, rel + (enc === 'br' ? '.br' : '.gz'));
          const st = await fsp.stat(file).catch(() => null);
          if (st === null || st.size !== e.variants[enc].size || (await decodedHash(file)) !== hex) {
            problems.push(`${rel}: the manifest lists a ${enc} variant that does not match`);
          }
        }
      }
    } catch (err) {
      manifest = 'invalid';
      problems.push(`manifest: ${/** @type {Error} */ (err).message}`);
    }
  }
  return { problems, variants, manifest, temps: all.filter((f) => f.endsWith('.pctmp')).length };
}

test('20 SIGKILLs at random moments: no corrupt output, manifest absent or valid, next run consistent', async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'pc-crash-'));
  const corpus = await buildRealCorpus(root, CORPUS_BYTES);
  expect(corpus.bytes).toBeGreaterThan(CORPUS_BYTES * 0.9);
  const random = rng(20261122);

  const cacheDir = `${root}-cache`;
  const flagsOf = (kind) => (kind === 'cache' ? ['--cache-dir', cacheDir] : ['--no-cache']);
  // Calibrate: a full run from scratch, timed; kills are spread over [0, that time].
  let t = Date.now();
  const first = await runCli([root, '--quiet', '--no-cache']);
  expect(first.code).toBe(0);
  const fullMs = Date.now() - t;
  expect(await checkConsistent(root, corpus.files)).toEqual([]);

  const rounds = [];
  let current = await hashesOf(root, corpus.files);
  let cacheEntriesChecked = 0;
  for (const kind of ['scratch', 'incremental', 'cache']) {
    const wanted = kind === 'cache' ? CACHE_KILLS : KILLS_PER_KIND;
    let kills = 0;
    let attempts = 0;
    let incrementalMs = fullMs;
    while (kills < wanted && attempts < wanted * 4) {
      attempts++;
      const allowed = new Map([...current].map(([rel, h]) => [rel, new Set([h])]));
      if (kind !== 'incremental') {
        await removeOutputs(root);
        if (kind === 'cache') await fsp.rm(cacheDir, { recursive: true, force: true });
      } else {
        // Rewrite a quarter of the files (grown by one line), so this run has real work to do.
        for (const rel of corpus.files) {
          if (random() >= 0.25) continue;
          await fsp.appendFile(path.join(root, rel), `\n/* round ${attempts} ${random()} */\n`);
        }
        current = await hashesOf(root, corpus.files);
        for (const [rel, h] of current) allowed.get(rel).add(h);
      }
      // Incremental runs are short: skip Node's start-up (about 150 ms), when nothing is written yet.
      const delayMs = kind !== 'incremental' ? Math.round(random() * fullMs) : Math.round(STARTUP_MS + random() * (incrementalMs - STARTUP_MS));
      const r = await runAndKill(root, delayMs, flagsOf(kind));
      const check = await afterKill(root, current, allowed);
      expect(check.problems).toEqual([]);
      expect(check.manifest).not.toBe('invalid');
      if (kind === 'cache') cacheEntriesChecked += expectWholeCache(cacheDir);

      t = Date.now();
      const next = await runCli([root, '--quiet', ...flagsOf(kind)]);
      const nextMs = Date.now() - t;
      expect(next.code).toBe(0);
      expect(await checkConsistent(root, corpus.files)).toEqual([]);
      if (!r.killed) {
        // It finished before the kill: no kill happened, try again with a new moment.
        if (kind === 'incremental') incrementalMs = Math.max(STARTUP_MS + 100, nextMs);
        continue;
      }
      if (kind === 'incremental') incrementalMs = Math.max(STARTUP_MS + 100, nextMs);
      kills++;
      rounds.push({ kind, delayMs, variantsPresent: check.variants, tempsLeft: check.temps, manifest: check.manifest, nextRunMs: nextMs });
    }
    expect(kills).toBe(wanted);
  }
  record('crash', {
    corpusFiles: corpus.files.length, corpusBytes: corpus.bytes, fullRunMs: fullMs,
    kills: rounds.length, corrupt: 0, invalidManifests: 0, nextRunFailures: 0,
    delaysMs: rounds.map((r) => r.delayMs), variantsPresentAfterKill: rounds.map((r) => r.variantsPresent),
    killsWithTempFilesLeft: rounds.filter((r) => r.tempsLeft > 0).length, cacheEntriesChecked, rounds,
  });
});
