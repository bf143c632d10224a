// A documentation site built by a real static-site generator, for bench:dictionary: VitePress
// (installed from npm into the bench cache at benchmark time, never a project dependency) builds
// one page per README of the packages it installed itself (pinned by its version), with a sidebar
// that lists every page, as documentation sites have.
//
//   node test/bench/docsite.js /tmp/docsite     builds it and prints the dist folder
import fs from 'node:fs/promises';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { npmInstallCached } from './corpus.js';

const execFileP = promisify(execFile);

export const VITEPRESS = 'vitepress@1.6.4';
/** Installed beside it only for their dependencies' READMEs (the pages' text). */
const CONTENT = ['jest@29.7.0', 'eslint@9.39.1'];

/** The node_modules of VitePress and the content packages (installed once into the bench cache). */
export const docSiteModules = () => npmInstallCached('docsite-vitepress', [VITEPRESS, ...CONTENT]);

/** READMEs of the installed packages, sorted by package name: [{ name, text }]. */
async function readmes(nodeModules, limit) {
  const names = [];
  for (const d of (await fs.readdir(nodeModules)).sort()) {
    if (d.startsWith('.')) continue;
    if (d.startsWith('@')) for (const s of (await fs.readdir(path.join(nodeModules, d))).sort()) names.push(`${d}/${s}`);
    else names.push(d);
  }
  const out = [];
  for (const name of names) {
    const text = await fs.readFile(path.join(nodeModules, name, 'README.md'), 'utf8').catch(() => null);
    if (text === null || text.length < 1500 || text.length > 80_000) continue;
    out.push({ name, text });
    if (out.length === limit) break;
  }
  return out;
}

/** A README as a page VitePress can build: no images (their files are not there), no Vue interpolation. */
function pageOf(text) {
  const body = text.replace(/!\[[^\]]*\]\([^)]*\)/g, '').replace(/<img[^>]*>/gi, '');
  return `::: v-pre\n${body}\n:::\n`;
}

/**
 * Build the site into `<dir>/docs/.vitepress/dist`.
 * @param {string} dir an empty work folder
 * @param {{ pages?: number }} [o]
 * @returns {Promise<{ dist: string, pages: number }>}
 */
export async function buildDocSite(dir, { pages = 150 } = {}) {
  const nodeModules = await docSiteModules();
  const docs = path.join(dir, 'docs');
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.join(docs, '.vitepress'), { recursive: true });
  await fs.mkdir(path.join(docs, 'pkg'), { recursive: true });
  const list = await readmes(nodeModules, pages);
  const slug = (name) => name.replace(/^@/, '').replace(/\//g, '__');
  for (const r of list) await fs.writeFile(path.join(docs, 'pkg', `${slug(r.name)}.md`), pageOf(r.text));
  await fs.writeFile(path.join(docs, 'index.md'), `# Packages\n\n${list.map((r) => `- [${r.name}](/pkg/${slug(r.name)})`).join('\n')}\n`);
  const sidebar = [{ text: 'Packages', items: list.map((r) => ({ text: r.name, link: `/pkg/${slug(r.name)}` })) }];
  const config = { title: 'Package docs', description: 'READMEs', ignoreDeadLinks: true, markdown: { html: false },
    themeConfig: { nav: [{ text: 'Home', link: '/' }], sidebar, search: { provider: 'local' } } };
  await fs.writeFile(path.join(docs, '.vitepress', 'config.mjs'), `export default ${JSON.stringify(config, null, 1)};\n`);
  // Its own package.json (type module), so Node and VitePress do not walk up into another project.
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-docsite', private: true, type: 'module' }));
  await fs.symlink(nodeModules, path.join(dir, 'node_modules'), 'dir');
  await execFileP(process.execPath, [path.join(nodeModules, 'vitepress', 'bin', 'vitepress.js'), 'build', 'docs'],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_ENV: 'production' } });
  return { dist: path.join(docs, '.vitepress', 'dist'), pages: list.length + 1 };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(process.argv[2] ?? 'docsite');
  const r = await buildDocSite(dir);
  console.log(`${r.pages} pages in ${r.dist}`);
}
