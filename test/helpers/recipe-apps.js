// The smallest apps of the frameworks compressed by a postbuild step (docs/frameworks.md): Angular 22
// and Eleventy 3, as files to write (no scaffolder). Shared by their tests and `npm run bench:frameworks`.

/** The workspace that holds Angular's packages (test/frameworks/angular: TypeScript 6.0 for its compiler). */
export const ANGULAR_WORKSPACE = 'precompressor-test-angular';
/** Where `ng build` writes the app's browser files. */
export const ANGULAR_OUT = 'dist/my-app/browser';

/** A module big enough for deploy deltas, `version` in its data. @param {string} version */
export function wordsModule(version) {
  const words = Array.from({ length: 600 }, (_, i) => `${version}word${(i * 7919) % 1000}`);
  return `export const words = ${JSON.stringify(words)};\n`;
}

const angularBuild = { builder: '@angular/build:application', options: {
  browser: 'src/main.ts', index: 'src/index.html', tsConfig: 'tsconfig.json', outputPath: 'dist/my-app', styles: ['src/styles.css'],
  outputHashing: 'all', // as `ng new` sets it for production
} };

/** An Angular 22 app (standalone, zoneless): a counter, a list from src/words.ts, a lazy module. */
export const angularFiles = () => ({
  'angular.json': JSON.stringify({ version: 1, cli: { analytics: false }, projects: { 'my-app': { projectType: 'application', root: '', sourceRoot: 'src', architect: { build: angularBuild } } } }),
  'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'preserve', moduleResolution: 'bundler', skipLibCheck: true, isolatedModules: true }, files: ['src/main.ts'] }),
  'src/index.html': '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>MyApp</title><base href="/"></head><body><app-root></app-root></body></html>\n',
  'src/styles.css': 'body { font-family: sans-serif; }\n',
  'src/main.ts': [
    "import { bootstrapApplication } from '@angular/platform-browser';",
    "import { provideZonelessChangeDetection } from '@angular/core';",
    "import { App } from './app';",
    'bootstrapApplication(App, { providers: [provideZonelessChangeDetection()] }).catch((e) => console.error(e));',
  ].join('\n'),
  'src/app.ts': [
    "import { Component, signal } from '@angular/core';",
    "import { words } from './words';",
    "@Component({ selector: 'app-root', template: `<h1>Home</h1><button (click)=\"click()\">clicked {{ n() }}</button><p>{{ lazy() }}</p><ul>@for (w of words; track $index) {<li>{{ w }}</li>}</ul>` })",
    'export class App {',
    '  n = signal(0);',
    "  lazy = signal('');",
    '  words = words;',
    "  async click() { this.n.update((n) => n + 1); this.lazy.set((await import('./lazy')).greet(this.n())); }",
    '}',
  ].join('\n'),
  'src/lazy.ts': `${wordsModule('lazy').replace('words', 'lazyWords')}export const greet = (n: number) => \`hello \${n} \${lazyWords.length}\`;\n`,
  'src/words.ts': wordsModule('v1'),
});

const nav = Array.from({ length: 40 }, (_, i) => `<li><a href="/docs/page-${i}/">Chapter ${i}: the ${['setup', 'build', 'deploy', 'serve'][i % 4]} guide</a></li>`).join('\n');
const text = (v, n) => Array.from({ length: n }, (_, i) => `Paragraph ${i} of ${v}: the quick brown fox ${(i * 7) % 13} jumps over the lazy dog.`).join('\n\n');
const page = (title, body) => `---\nlayout: base.njk\ntitle: ${title}\n---\n# ${title}\n\n${body}\n`;

/** An Eleventy 3 site: a layout with a long nav, eight Markdown pages, a passthrough stylesheet. */
export const eleventyFiles = () => ({
  'eleventy.config.js': "export default function (config) { config.addPassthroughCopy('style.css'); }\n",
  'style.css': ['body', 'header', 'nav', 'main', 'footer', 'h1', 'p', 'a'].map((s) => `${s} { margin: 0 auto; padding: 1em; font-family: system-ui, sans-serif; line-height: 1.5; }\n`).join(''),
  '_includes/base.njk': `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title><link rel="stylesheet" href="/style.css"></head>\n<body><header><nav><ul>\n${nav}\n</ul></nav></header>\n<main>{{ content }}</main>\n<footer>Made with Eleventy.</footer></body></html>\n`,
  'index.md': page('Home', text('home', 20)),
  'about.md': page('About', text('about', 20)),
  ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`docs/page-${i}.md`, page(`Chapter ${i}`, text(`chapter ${i}`, 20))])),
});

/** The edit after a first deploy: one paragraph more on the about page. */
export const eleventyEdit = '\nOne paragraph more, written after the first deploy.\n';
