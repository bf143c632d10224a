import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * A small documentation site for the site-dictionary tests: `n` HTML pages (`index.html`, then
 * `docs/page-<i>.html`) sharing a layout (head, style, a nav that lists every page, footer), each
 * with text of its own, deterministic. `redesign` gives the layout other markup and styles (a new
 * theme: what a dictionary of the old layout no longer matches).
 * @param {string} dir
 * @param {number} n
 * @param {{ redesign?: boolean }} [o]
 * @returns {Promise<{ rel: string, title: string }[]>}
 */
export async function writeSite(dir, n, { redesign = false } = {}) {
  const pages = Array.from({ length: n }, (_, i) => (i === 0
    ? { rel: 'index.html', title: 'Home' }
    : { rel: `docs/page-${i}.html`, title: `Chapter ${i}: ${WORDS[i % WORDS.length]} and ${WORDS[(i * 7) % WORDS.length]}` }));
  await fs.mkdir(path.join(dir, 'docs'), { recursive: true });
  for (const [i, p] of pages.entries()) await fs.writeFile(path.join(dir, p.rel), redesign ? redesigned(pageHtml(pages, i)) : pageHtml(pages, i));
  return pages;
}

const WORDS = ['compression', 'dictionary', 'browser', 'server', 'manifest', 'variant', 'window', 'stream', 'header', 'cache',
  'request', 'response', 'encoding', 'build', 'deploy', 'visitor', 'page', 'layout', 'sidebar', 'search', 'module', 'bundle'];

/** Text of its own for page `i`: sentences from a small word list, seeded by the index. */
function textOf(i) {
  let x = (i + 1) * 2654435761;
  const next = () => (x = (x * 1103515245 + 12345) >>> 0);
  const out = [];
  for (let s = 0; s < 40; s++) {
    const len = 8 + (next() % 10);
    out.push(Array.from({ length: len }, () => WORDS[next() % WORDS.length]).join(' ') + ` ${next().toString(36)}.`);
  }
  return out.join(' ');
}

/** The same page in another theme: other element names, attributes and styles throughout the layout. */
function redesigned(html) {
  return html
    .replace(/<li><a href="([^"]*)"[^>]*>/g, '<div class="VPSidebarItem level-0 is-link"><div class="item"><a class="VPLink link" href="$1"><p class="text">')
    .replace(/<\/a><\/li>/g, '</p></a></div></div>')
    .replace(/<style>[\s\S]*?<\/style>/, '<link rel="stylesheet" href="/assets/style.B4x9Qm2a.css"><script type="module" src="/assets/app.Dk3nP0qW.js"></script>')
    .replace('<nav aria-label="Documentation">', '<aside class="VPSidebar" data-v-5d98c3a5><nav class="nav" id="VPSidebarNav" aria-labelledby="sidebar-aria-label" tabindex="-1">')
    .replace('</nav>', '</nav></aside>')
    .replace('<footer>', '<footer class="VPFooter" data-v-e315a0ad><div class="container" data-v-e315a0ad><p class="message" data-v-e315a0ad>')
    .replace('</footer>', '</p></div></footer>');
}

function pageHtml(pages, i) {
  const prefix = pages[i].rel.includes('/') ? '../' : '';
  const nav = pages.map((p, j) => `    <li><a href="${prefix}${p.rel}"${j === i ? ' class="active" aria-current="page"' : ' class="link"'}>${p.title}</a></li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${pages[i].title} | Site docs</title>
  <style>
    body { font-family: system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: 16rem 1fr; }
    nav { border-right: 1px solid #ddd; padding: 1rem; } nav a.active { font-weight: bold; } main { padding: 2rem; max-width: 48rem; }
    footer { grid-column: 1 / 3; padding: 1rem; color: #666; border-top: 1px solid #ddd; }
  </style>
</head>
<body>
  <nav aria-label="Documentation">
    <ul>
${nav}
    </ul>
  </nav>
  <main>
    <h1>${pages[i].title}</h1>
    <p>${textOf(i)}</p>
  </main>
  <footer>Site docs, built with a static-site generator. Released under the MIT license. Edit this page on the repository.</footer>
</body>
</html>
`;
}
