import { acceptsHtml, createNegotiator, CACHE_LIMIT } from '../../lib/serve/http/negotiate.js';

const n = createNegotiator(['br', 'zstd', 'gzip']);
const ALL = n.maskOf(['br', 'zstd', 'gzip']);
const BR_GZ = n.maskOf(['br', 'gzip']);
const GZ = n.maskOf(['gzip']);

describe('negotiate Accept-Encoding (RFC 9110 §12.5.3)', () => {
  test.each([
    // [header, mask, expected]
    [undefined, BR_GZ, 'identity'], // no header: identity
    ['', BR_GZ, 'identity'], // empty: no coding wanted
    ['gzip, deflate, br', BR_GZ, 'br'], // Chrome order, no q: server prefers br
    ['gzip, deflate, br, zstd', ALL, 'br'],
    ['gzip, deflate, br, zstd', GZ, 'gzip'],
    ['gzip', BR_GZ, 'gzip'],
    ['br;q=0.5, gzip;q=0.8', BR_GZ, 'gzip'], // q wins over server order
    ['br;q=0, gzip', BR_GZ, 'gzip'], // q=0 refuses
    ['br;q=0, gzip;q=0', BR_GZ, 'identity'], // identity still acceptable
    ['*', BR_GZ, 'br'], // * covers everything: server order
    ['*;q=0.5, gzip', BR_GZ, 'gzip'], // named beats *
    ['gzip;q=0, *', BR_GZ, 'br'], // * does not override an explicit refusal
    ['gzip;q=0, *', GZ, 'identity'],
    ['identity;q=0', BR_GZ, null], // br/gzip not named, identity refused → 406
    ['identity;q=0, gzip', BR_GZ, 'gzip'],
    ['*;q=0', BR_GZ, null],
    ['*;q=0, identity', BR_GZ, 'identity'],
    ['*;q=0', 0, null],
    ['identity', BR_GZ, 'identity'],
    ['identity, br', BR_GZ, 'br'], // equal q: server prefers br
    ['identity;q=1, br;q=0.9', BR_GZ, 'identity'],
    ['BR, GZIP', BR_GZ, 'br'], // case-insensitive
    ['br;level=5;q=0.5, gzip;q=0.4', BR_GZ, 'br'], // extra params tolerated
    ['gzip;q=abc, br', BR_GZ, 'br'], // invalid q is not acceptable
    ['deflate, compress', BR_GZ, 'identity'],
    ['gzip', 0, 'identity'], // file without variants
    ['zstd;q=1, br;q=1', ALL, 'br'],
    ['zstd, gzip', ALL, 'zstd'],
  ])('%j with mask %i → %j', (header, mask, expected) => {
    expect(n.negotiate(header, mask)).toBe(expected);
    expect(n.negotiate(header, mask)).toBe(expected); // cached answer is the same
  });

  test('array header values are joined', () => {
    expect(n.negotiate(['gzip', 'br'], BR_GZ)).toBe('br');
  });

  test('server order is configurable', () => {
    const g = createNegotiator(['gzip', 'br']);
    expect(g.negotiate('br, gzip', g.maskOf(['br', 'gzip']))).toBe('gzip');
    expect(g.negotiate('br;q=1, gzip;q=0.9', g.maskOf(['br', 'gzip']))).toBe('br');
  });

  test('maskOf ignores encodings the server does not use', () => {
    const g = createNegotiator(['gzip']);
    expect(g.maskOf(['br', 'gzip'])).toBe(1);
    expect(g.negotiate('br', g.maskOf(['br', 'gzip']))).toBe('identity');
  });

  test('the cache is bounded under many distinct header values', () => {
    const g = createNegotiator(['br', 'gzip']);
    for (let i = 0; i < CACHE_LIMIT * 2 + 5; i++) g.negotiate(`gzip;q=0.${i % 9 + 1}, x-${i}`, 3);
    expect(g.cacheSize()).toBeLessThanOrEqual(CACHE_LIMIT);
    expect(g.negotiate('gzip;q=0.5, br', 3)).toBe('br');
  });
});

describe('acceptsHtml: is the request a navigation (SPA fallback)', () => {
  test.each([
    ['text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', true], // Chromium page load
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true], // Firefox page load
    ['TEXT/HTML', true],
    ['application/xhtml+xml', true],
    [['text/plain', 'text/html'], true], // repeated header lines
    ['text/html;q=0', false], // refused
    ['text/html;q=0.0, */*', false],
    ['*/*', false], // scripts, fetch(), curl
    ['text/*', false],
    ['text/css,*/*;q=0.1', false], // stylesheets
    ['image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', false], // images
    ['', false],
    [undefined, false],
  ])('%j → %s', (header, expected) => {
    expect(acceptsHtml(header)).toBe(expected);
  });
});

test('a header like the previous request\'s gets its own answer, per set of variants', () => {
  const g = createNegotiator(['br', 'gzip']);
  const both = g.maskOf(['br', 'gzip']);
  const gz = g.maskOf(['gzip']);
  // equal text in a new string each time, as the parser gives it, then another header
  expect(g.negotiate(['br', 'gzip'].join(', '), both)).toBe('br');
  expect(g.negotiate(['br', 'gzip'].join(', '), gz)).toBe('gzip');
  expect(g.negotiate('br;q=0, gzip', both)).toBe('gzip');
  expect(g.negotiate('gzip;q=0, br', gz)).toBe('identity');
  expect(g.negotiate(['br', 'gzip'].join(', '), both)).toBe('br');
  expect(g.negotiate('', both)).toBe('identity');
  expect(g.negotiate(undefined, both)).toBe('identity');
});
