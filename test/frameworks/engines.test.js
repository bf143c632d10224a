import { satisfies, unsupported } from '../helpers/framework-app.js';

// The framework tests skip where the framework's own `engines` exclude the running Node (CI runs
// 22.12.0, 22.x, 24.x and 26.x): the ranges as the frameworks publish them.

test.each([
  ['v22.12.0', '>=22.17', false], // SvelteKit 3
  ['v22.17.0', '>=22.17', true],
  ['v22.12.0', '>=22.12.0', true], // Astro 7
  ['v22.12.0', '^22.19.0||^24.11.0||>=26.0.0', false], // Nuxt 4.5
  ['v22.19.1', '^22.19.0||^24.11.0||>=26.0.0', true],
  ['v24.21.0', '^22.19.0||^24.11.0||>=26.0.0', true],
  ['v24.10.0', '^22.19.0||^24.11.0||>=26.0.0', false],
  ['v26.0.0', '^22.19.0||^24.11.0||>=26.0.0', true],
  ['v22.21.0', '>=22.22.0', false], // React Router 8
  ['v22.12.0', '^20.19.0 || >=22.12.0', true], // Vite 8
])('%s satisfies %s: %s', (version, range, expected) => {
  expect(satisfies(version, range)).toBe(expected);
});

test('a package that is not installed is a reason to skip, named', () => {
  expect(unsupported(['no-such-framework'])).toBe('no-such-framework is not installed');
});
