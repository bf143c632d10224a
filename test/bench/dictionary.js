// Site-dictionary benchmark (`npm run bench:dictionary`): a documentation site of 150+ pages built
// by a real static-site generator (VitePress, installed into the bench cache at benchmark time; see
// test/bench/docsite.js), compressed with and without the site dictionary. Reports
// - pages 2-N of a visit (the home page first) as % of their br-11 bytes;
// - pages 2-6 with the dictionary's own bytes counted (the sidebar's first five, and every window of
//   five pages in sidebar order);
// - the CPU of the dictionary and the page variants (one thread) against the br-11 pass of the pages,
//   and the whole pass (all cores) with and without it;
// - what a dictionary would gain on JSON, SVG and per-page JS chunks;
// - a real Chromium visit (home, then five pages) over HTTP, when /usr/bin/chromium exists.
//
//   node test/bench/dictionary.js [--json] [--pages N]
import fs from 'node:fs/promises';
import fssync from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { buildDocSite, docSiteModules } from './docsite.js';
import { npmInstallCached, listFiles } from './corpus.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { markdownTable, fmtInt, fmt, machineInfo, hasCommand } from './util.js';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { deltaEncoders, encodeDelta, verifyDelta } from '../../lib/compress/dictionaries/delta-encode.js';
import { chooseDictionary } from '../../lib/compress/dictionaries/choose-dictionary.js';
import { encodeBufferSync, zlibOptions } from '../../lib/compress/encoders/encode.js';
import { expressServer, recordedBrowser } from '../helpers/servers.js';

const VISIT = 5;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** CPU milliseconds (all threads of the process: libuv's pool included) spent in `fn`. */
async function cpuMs(fn) {
  const start = process.cpuUsage();
  const out = await fn();
  const d = process.cpuUsage(start);
  return { ms: (d.user + d.system) / 1000, out };
}

const brOf = (buf) => encodeBufferSync(buf, 'br', zlibOptions('br', { size: buf.length, mode: 'text', brotliQuality: 11, gzipLevel: 9 })).length;
const sha = (b) => crypto.createHash('sha256').update(b).digest();

/** The pages of the site in visit order: the home page, then the sidebar's order (sorted paths). */
function visitOrder(manifest) {
  const pages = Object.keys(manifest.files).filter((rel) => rel.endsWith('.html') && rel !== 'index.html' && rel !== '404.html').sort();
  return ['index.html', ...pages];
}

/** What a browser holding the site dictionary downloads for `rel`: its smaller variant against it, else br. */
function sentBytes(manifest, rel, key) {
  const e = manifest.files[rel];
  const rec = e.deltas?.[key];
  const sizes = Object.values(rec ?? {}).map((v) => v.size);
  return sizes.length > 0 ? Math.min(...sizes) : e.variants.br.size;
}

/** Pages 2-N, the first five, and every window of five, from the manifest's exact sizes. */
function visitFigures(manifest) {
  const rel = manifest.siteDictionary.path;
  const key = manifest.files[rel].dictionary.hash;
  const dictBytes = manifest.files[rel].variants.br.size;
  const order = visitOrder(manifest);
  const br = (r) => manifest.files[r].variants.br.size;
  const rest = order.slice(1);
  const sum = (list, f) => list.reduce((n, r) => n + f(r), 0);
  const windows = [];
  for (let i = 1; i + VISIT <= order.length; i++) {
    const w = order.slice(i, i + VISIT);
    windows.push((dictBytes + sum(w, (r) => sentBytes(manifest, r, key))) / sum(w, br));
  }
  const first = rest.slice(0, VISIT);
  return {
    pages: order.length, dictionary: rel, dictSize: manifest.files[rel].size, dictBytes,
    restSent: sum(rest, (r) => sentBytes(manifest, r, key)), restBr: sum(rest, br),
    firstSent: dictBytes + sum(first, (r) => sentBytes(manifest, r, key)), firstBr: sum(first, br),
    windowMean: windows.reduce((a, b) => a + b, 0) / windows.length, windowMax: Math.max(...windows),
    withVariant: rest.filter((r) => manifest.files[r].deltas?.[key]).length,
  };
}

/**
 * The next deploy: the same site with one page more (a new sidebar entry on every page), built by
 * VitePress into a new folder and compressed in the same output path after emptying it (as Vite
 * does), with the same dictionary store. Is the dictionary kept, and what does the pass cost?
 */
async function nextDeploy(work, dist, pages, firstPath) {
  const site = await buildDocSite(path.join(work, 'docsite-next'), { pages: pages + 1 });
  await fs.rm(dist, { recursive: true, force: true });
  const pass = await wholePass(site.dist, dist, true);
  const manifest = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
  const visit = visitFigures(manifest);
  return { pages: site.pages, kept: manifest.siteDictionary.path === firstPath, method: pass.report.siteDictionary.method, cpuMs: pass.cpuMs, wallMs: pass.wallMs, visit };
}

/** One-thread CPU: br-11 of every page; choosing the dictionary; dcb + dcz of every page and their check. */
async function cpuFigures(dist, manifest, encoders) {
  const order = visitOrder(manifest);
  const pages = await Promise.all(order.map((r) => fs.readFile(path.join(dist, r))));
  const br = await cpuMs(async () => pages.map(brOf));
  const choose = await cpuMs(async () => chooseDictionary(pages, br.out, encoders.includes('dcz') ? 'dcz' : 'dcb'));
  const dict = /** @type {Buffer} */ (choose.out.bytes);
  const digest = sha(dict);
  const variants = await cpuMs(async () => {
    for (const p of pages) {
      for (const enc of encoders) {
        const d = await encodeDelta(enc, p, dict, digest);
        if (d && !verifyDelta(enc, d, dict, digest, p)) throw new Error(`${enc} did not verify`);
      }
    }
  });
  return { brMs: br.ms, chooseMs: choose.ms, variantMs: variants.ms, tried: choose.out.tried, method: choose.out.method };
}

/** A whole pass (all cores) over a copy of the site: wall and CPU ms. */
async function wholePass(dist, dir, siteDictionary) {
  await fs.cp(dist, dir, { recursive: true });
  const t = performance.now();
  const { ms, out } = await cpuMs(() => precompress(dir, { cache: false, deltas: false, siteDictionary, dictionaryStore: `${dir}-store` }));
  return { wallMs: performance.now() - t, cpuMs: ms, report: out };
}

/**
 * What a dictionary gains on a set of other files: the product's own choice (chooseDictionary on
 * half of them), and a plain concatenation of sample files at several sizes; both measured on the
 * other half (zstd 19 and Brotli 11 against the dictionary, 36-40 header bytes counted).
 * @param {Buffer[]} files
 */
async function otherFigures(files, encoders) {
  const train = files.filter((_, i) => i % 2 === 0);
  const test = files.filter((_, i) => i % 2 === 1);
  const testBr = test.map(brOf);
  const brTotal = testBr.reduce((a, b) => a + b, 0);
  const sentWith = async (dict) => {
    let n = 0;
    for (const f of test) {
      const sizes = [];
      for (const enc of encoders) sizes.push((await encodeDelta(enc, f, dict, sha(dict)))?.length ?? Infinity);
      n += Math.min(...sizes);
    }
    return n;
  };
  const rows = [];
  const own = chooseDictionary(train, train.map(brOf), encoders.includes('dcz') ? 'dcz' : 'dcb');
  if (own.bytes) rows.push({ method: `chosen (${own.method})`, size: own.bytes.length, dictBr: brOf(own.bytes), sent: await sentWith(own.bytes) });
  else rows.push({ method: 'chosen: none (nothing worth it)', size: 0, dictBr: 0, sent: brTotal });
  for (const budget of [16, 64, 256].map((k) => k * 1024)) {
    const parts = [];
    let used = 0;
    for (const f of train) {
      if (used + f.length > budget) continue;
      parts.push(f);
      used += f.length;
    }
    const dict = Buffer.concat(parts);
    if (dict.length > 0) rows.push({ method: `${budget / 1024} KiB of files`, size: dict.length, dictBr: brOf(dict), sent: await sentWith(dict) });
  }
  return { files: files.length, tested: test.length, brTotal, perFile: brTotal / test.length, rows };
}

/**
 * The pages' dictionary against zstd's trainer (`zstd --train`, when the command exists), each
 * built from the even pages and measured on the odd ones as dcb (Brotli 11 with it as raw
 * content; a trained dictionary starts with zstd's magic, so dcz would read it as a formatted one).
 */
async function trainedFigures(dist, manifest, work) {
  const order = visitOrder(manifest);
  const pages = await Promise.all(order.map((r) => fs.readFile(path.join(dist, r))));
  const train = pages.filter((_, i) => i % 2 === 0);
  const test = pages.filter((_, i) => i % 2 === 1);
  const br = test.reduce((n, p) => n + brOf(p), 0);
  const dcb = async (dict) => {
    let n = 0;
    for (const p of test) n += /** @type {Buffer} */ (await encodeDelta('dcb', p, dict, sha(dict))).length;
    return n;
  };
  const own = chooseDictionary(train, train.map(brOf), 'dcz');
  const rows = [{ method: `ours (${own.method})`, size: own.size, dictBr: brOf(/** @type {Buffer} */ (own.bytes)), sent: await dcb(/** @type {Buffer} */ (own.bytes)) }];
  if (hasCommand('zstd')) {
    const dir = path.join(work, 'train');
    await fs.mkdir(dir, { recursive: true });
    const files = await Promise.all(train.map(async (p, i) => {
      const f = path.join(dir, `${i}.html`);
      await fs.writeFile(f, p);
      return f;
    }));
    for (const kib of [32, 64, 110]) {
      const out = path.join(work, `trained-${kib}`);
      await promisify(execFile)('zstd', ['-q', '-f', '--train', `--maxdict=${kib * 1024}`, '-o', out, ...files]);
      const dict = await fs.readFile(out);
      rows.push({ method: `zstd --train, ${kib} KiB`, size: dict.length, dictBr: brOf(dict), sent: await dcb(dict) });
    }
  }
  return { tested: test.length, br, rows };
}

/** JSON (package.json files), SVG icons, and the site's per-page JS chunks. */
async function otherSets(dist) {
  const take = (list, n) => list.filter((_, i) => i % Math.max(1, Math.floor(list.length / n)) === 0).slice(0, n);
  const modules = await docSiteModules();
  const json = (await fs.readdir(modules)).filter((d) => !d.startsWith('.') && !d.startsWith('@')).sort()
    .map((d) => path.join(modules, d, 'package.json')).filter((f) => fssync.existsSync(f));
  const icons = path.join(await npmInstallCached('dictionary-icons', ['lucide-static@1.62.0']), 'lucide-static', 'icons');
  const svg = (await fs.readdir(icons)).filter((n) => n.endsWith('.svg')).sort().map((n) => path.join(icons, n));
  const chunks = (await listFiles(path.join(dist, 'assets'))).filter((f) => /^pkg_.*\.md\.[^.]+\.lean\.js$/.test(f.rel)).map((f) => f.abs).sort();
  const read = (list) => Promise.all(list.map((f) => fs.readFile(f)));
  return {
    'JSON (package.json files)': await read(take(json, 200)),
    'SVG icons (lucide-static)': await read(take(svg, 400)),
    'per-page JS chunks (VitePress .lean.js)': await read(take(chunks, 150)),
  };
}

/** A real Chromium visit over HTTP: the home page, then `VISIT` pages; wire bytes of the documents and the dictionary. */
async function browserVisit(dist, manifest, work, dictionaries) {
  if (!fssync.existsSync(CHROMIUM)) return null;
  const served = await expressServer(dist);
  const dictRel = manifest.siteDictionary.path;
  let onDict = () => {};
  const dictDone = new Promise((resolve) => (onDict = resolve));
  const { browser, page, net } = await recordedBrowser(CHROMIUM, path.join(work, `profile-${dictionaries}`), (r) => {
    if (r.url?.endsWith(`/${dictRel}`)) onDict(undefined);
  });
  try {
    const order = visitOrder(manifest).slice(0, VISIT + 1);
    await page.goto(`${served.origin}/`, { waitUntil: 'load' });
    if (dictionaries) {
      await dictDone;
      // Chromium stores the dictionary a moment after its response: probe with navigations to a
      // missing page (not counted) until one offers it, as a visitor reading the first page would.
      for (let i = 0; i < 50; i++) {
        net.clear();
        await page.goto(`${served.origin}/probe-${i}`, { waitUntil: 'load' });
        if ([...net.values()].some((r) => r.url?.endsWith(`/probe-${i}`) && r.sent?.['available-dictionary'])) break;
      }
    }
    const rows = [];
    for (const rel of order.slice(1)) {
      net.clear();
      await page.goto(`${served.origin}/${rel}`, { waitUntil: 'load' });
      const nav = [...net.values()].find((r) => r.url === `${served.origin}/${rel}`);
      rows.push({ rel, encoding: nav?.headers?.['content-encoding'] ?? 'identity', wire: nav?.wire ?? 0 });
    }
    return rows;
  } finally {
    await browser.close();
    await served.close();
  }
}

function printVisit(v) {
  console.log(`\n${v.pages} pages; dictionary ${v.dictionary}: ${fmtInt(v.dictSize)} B, ${fmtInt(v.dictBytes)} B as br-11 (sent once); ` +
    `${v.withVariant} of ${v.pages - 1} pages after the first have a variant against it.`);
  console.log(markdownTable(['visit', 'sent B', 'br-11 B', 'sent / br-11', 'target'], [
    [`pages 2-${v.pages} (dictionary not counted)`, fmtInt(v.restSent), fmtInt(v.restBr), `**${fmt((v.restSent / v.restBr) * 100, 1)} %**`, '≤ 40 %'],
    [`pages 2-${VISIT + 1} (sidebar order) + the dictionary`, fmtInt(v.firstSent), fmtInt(v.firstBr), `**${fmt((v.firstSent / v.firstBr) * 100, 1)} %**`, '≤ 60 %'],
    [`any ${VISIT} consecutive pages + the dictionary: mean / worst`, '', '', `${fmt(v.windowMean * 100, 1)} % / ${fmt(v.windowMax * 100, 1)} %`, '≤ 60 %'],
  ], 'lrrrl'));
}

function printCpu(cpu, withDict, without) {
  console.log('\nCandidates scored while choosing (sample of 12 pages; score = own br bytes + 5 × mean page bytes):');
  console.log(markdownTable(['method', 'size B', 'own br B', 'mean page B (zstd 9)', 'score'],
    cpu.tried.map((t) => [t.method, fmtInt(t.size), fmtInt(t.ownBytes), fmtInt(t.pageBytes), fmtInt(t.score)]), 'lrrrr'));
  console.log('\nBuild CPU, one thread (process CPU time, libuv pool included):');
  console.log(markdownTable(['work', 'CPU ms', '× br-11 of the pages'], [
    ['br-11 of every page', fmtInt(cpu.brMs), '1.00'],
    ['choosing the dictionary', fmtInt(cpu.chooseMs), fmt(cpu.chooseMs / cpu.brMs)],
    ['dcb + dcz of every page, each decoded and compared', fmtInt(cpu.variantMs), fmt(cpu.variantMs / cpu.brMs)],
    ['**dictionary + variants**', fmtInt(cpu.chooseMs + cpu.variantMs), `**${fmt((cpu.chooseMs + cpu.variantMs) / cpu.brMs)}**`],
  ], 'lrr'));
  console.log(`\nWhole pass (all cores, br-11 + gzip-9 of the whole site, no cache): ${fmtInt(withDict.wallMs)} ms wall / ${fmtInt(withDict.cpuMs)} ms CPU ` +
    `with the site dictionary, ${fmtInt(without.wallMs)} ms / ${fmtInt(without.cpuMs)} ms with --no-site-dictionary ` +
    `(× ${fmt(withDict.wallMs / without.wallMs)} wall, × ${fmt(withDict.cpuMs / without.cpuMs)} CPU).`);
}

function printOthers(others) {
  for (const [name, o] of Object.entries(others)) {
    console.log(`\n${name}: ${o.files} files, dictionary from half, measured on the other ${o.tested} (br-11 ${fmtInt(o.brTotal)} B, ${fmtInt(o.perFile)} B per file):`);
    console.log(markdownTable(['dictionary', 'size B', 'own br B', 'sent / br-11', `${VISIT} files + dictionary / br-11`], o.rows.map((r) => [
      r.method, fmtInt(r.size), fmtInt(r.dictBr), `${fmt((r.sent / o.brTotal) * 100, 1)} %`,
      `${fmt(((r.dictBr + (VISIT * r.sent) / o.tested) / (VISIT * o.perFile)) * 100, 1)} %`]), 'lrrrr'));
  }
}

async function main() {
  const json = process.argv.includes('--json');
  const pagesArg = process.argv.indexOf('--pages');
  const encoders = deltaEncoders();
  if (encoders.length === 0) {
    console.error(`Node ${process.version} has no zstd or Brotli encoder that takes a dictionary: run this on Node >= 22.19.`);
    process.exit(2);
  }
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'pc-bench-dictionary-'));
  try {
    const site = await buildDocSite(path.join(work, 'docsite'), { pages: pagesArg > 0 ? Number(process.argv[pagesArg + 1]) : 150 });
    const without = await wholePass(site.dist, path.join(work, 'plain'), false);
    const withDict = await wholePass(site.dist, path.join(work, 'dist'), true);
    const dist = path.join(work, 'dist');
    const manifest = JSON.parse(await fs.readFile(path.join(dist, 'precompressor-manifest.json'), 'utf8'));
    const visit = visitFigures(manifest);
    const cpu = await cpuFigures(dist, manifest, encoders);
    const trained = await trainedFigures(dist, manifest, work);
    const next = await nextDeploy(work, dist, site.pages - 1, visit.dictionary);
    const others = {};
    for (const [name, files] of Object.entries(await otherSets(dist))) others[name] = await otherFigures(files, encoders);
    const chromium = { dictionary: await browserVisit(dist, manifest, work, true), plain: await browserVisit(path.join(work, 'plain'), manifest, work, false) };
    const result = { node: process.version, machine: machineInfo(), encoders, visit, cpu, trained, next, withDict: { ...withDict, report: withDict.report.siteDictionary }, without: { wallMs: without.wallMs, cpuMs: without.cpuMs }, others, chromium };
    if (json) return console.log(JSON.stringify(result, null, 2));
    console.log(`Node ${process.version}, encoders ${encoders.join(' + ')}; ${JSON.stringify(machineInfo())}`);
    printVisit(visit);
    printCpu(cpu, withDict, without);
    console.log(`\nNext deploy (${next.pages} pages: one more, so a new sidebar entry on every page; the folder emptied first, the same store): ` +
      `dictionary ${next.kept ? 'kept' : 'replaced'} (method ${next.method}); pages 2-${next.pages} at ${fmt((next.visit.restSent / next.visit.restBr) * 100, 1)} % of br-11; ` +
      `a returning visitor's pages 2-6 ${fmt(((next.visit.firstSent - (next.kept ? next.visit.dictBytes : 0)) / next.visit.firstBr) * 100, 1)} % ` +
      `(${next.kept ? 'no new dictionary to download' : 'the new dictionary included'}); the pass ${fmtInt(next.cpuMs)} ms CPU, ${fmtInt(next.wallMs)} ms wall.`);
    console.log(`\nThe pages' dictionary against zstd's trainer: built from the even pages, dcb (Brotli 11) of the ${trained.tested} odd ones (br-11 ${fmtInt(trained.br)} B):`);
    console.log(markdownTable(['dictionary', 'size B', 'own br B', 'sent / br-11'], trained.rows.map((r) => [r.method, fmtInt(r.size), fmtInt(r.dictBr), `${fmt((r.sent / trained.br) * 100, 1)} %`]), 'lrrr'));
    printOthers(others);
    if (chromium.dictionary && chromium.plain) {
      console.log(`\nReal Chromium visit over HTTP (home page, then ${VISIT} pages; bytes on the wire, response heads included):`);
      const total = (rows) => rows.reduce((n, r) => n + r.wire, 0);
      console.log(markdownTable(['page', 'with the dictionary', 'without (br)'], [
        ...chromium.dictionary.map((r, i) => [r.rel, `${fmtInt(r.wire)} B (${r.encoding})`, `${fmtInt(chromium.plain?.[i]?.wire)} B (${chromium.plain?.[i]?.encoding})`]),
        ['**pages 2-6**', `**${fmtInt(total(chromium.dictionary))} B** + dictionary ${fmtInt(visit.dictBytes)} B`, `**${fmtInt(total(chromium.plain))} B**`],
      ], 'lrr'));
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

await main();
