import { evaluatePreconditions, evaluateRange } from '../../lib/serve/http/conditional.js';

const rep = { etag: '"abc"', lastModified: 'Sun, 22 Nov 2026 03:00:00 GMT' };
const before = 'Sun, 22 Nov 2026 02:00:00 GMT';
const after = 'Sun, 22 Nov 2026 04:00:00 GMT';

describe('evaluatePreconditions', () => {
  test.each([
    [{}, 200],
    [{ 'if-none-match': '"abc"' }, 304],
    [{ 'if-none-match': 'W/"abc"' }, 304], // weak comparison for If-None-Match
    [{ 'if-none-match': '"x", "abc"' }, 304],
    [{ 'if-none-match': '*' }, 304],
    [{ 'if-none-match': '"x"' }, 200],
    [{ 'if-none-match': '"x"', 'if-modified-since': after }, 200], // INM takes precedence over IMS
    [{ 'if-modified-since': after }, 304],
    [{ 'if-modified-since': rep.lastModified }, 304],
    [{ 'if-modified-since': before }, 200],
    [{ 'if-modified-since': 'garbage' }, 200],
    [{ 'if-none-match': '"abc"', 'cache-control': 'no-cache' }, 200],
    [{ 'if-match': '"abc"' }, 200],
    [{ 'if-match': '"x", "abc"' }, 200],
    [{ 'if-match': '*' }, 200],
    [{ 'if-match': '"x"' }, 412],
    [{ 'if-match': 'W/"abc"' }, 412], // strong comparison for If-Match
    [{ 'if-unmodified-since': after }, 200],
    [{ 'if-unmodified-since': before }, 412],
    [{ 'if-unmodified-since': 'garbage' }, 200],
    [{ 'if-match': '"abc"', 'if-unmodified-since': before }, 200], // IUS ignored when If-Match present
    [{ 'if-match': '"x"', 'if-none-match': '"abc"' }, 412], // 412 evaluated before 304
  ])('%j → %i', (headers, status) => {
    expect(evaluatePreconditions(headers, rep)).toBe(status);
  });
  test('weak ETag never passes If-Match', () => {
    expect(evaluatePreconditions({ 'if-match': 'W/"abc"' }, { etag: 'W/"abc"' })).toBe(412);
  });
  test('no validators: If-None-Match never 304, If-Match fails', () => {
    expect(evaluatePreconditions({ 'if-none-match': '"abc"' }, {})).toBe(200);
    expect(evaluatePreconditions({ 'if-match': '"abc"' }, {})).toBe(412);
  });
});

describe('evaluateRange', () => {
  test.each([
    [{}, { kind: 'full' }],
    [{ range: 'bytes=0-9' }, { kind: 'partial', start: 0, end: 9 }],
    [{ range: 'bytes=0-0' }, { kind: 'partial', start: 0, end: 0 }],
    [{ range: 'bytes=-10' }, { kind: 'partial', start: 90, end: 99 }],
    [{ range: 'bytes=90-' }, { kind: 'partial', start: 90, end: 99 }],
    [{ range: 'bytes=90-500' }, { kind: 'partial', start: 90, end: 99 }],
    [{ range: 'bytes=0-4,5-9' }, { kind: 'partial', start: 0, end: 9 }], // combined
    [{ range: 'bytes=0-4,50-59' }, { kind: 'full' }], // multiple ranges: full
    [{ range: 'bytes=100-' }, { kind: 'unsatisfiable' }],
    [{ range: 'bytes=200-300' }, { kind: 'unsatisfiable' }],
    [{ range: 'bytes=abc' }, { kind: 'full' }],
    [{ range: 'items=0-5' }, { kind: 'full' }],
    [{ range: 'items=500-600' }, { kind: 'full' }],
    [{ range: 'bytes=0-9', 'if-range': '"abc"' }, { kind: 'partial', start: 0, end: 9 }],
    [{ range: 'bytes=0-9', 'if-range': '"other"' }, { kind: 'full' }],
    [{ range: 'bytes=0-9', 'if-range': 'W/"abc"' }, { kind: 'full' }],
    [{ range: 'bytes=0-9', 'if-range': rep.lastModified }, { kind: 'partial', start: 0, end: 9 }],
    [{ range: 'bytes=0-9', 'if-range': before }, { kind: 'full' }],
  ])('%j → %j', (headers, decision) => {
    expect(evaluateRange(headers, 100, rep)).toEqual(decision);
  });
  test('a weak current ETag never satisfies If-Range', () => {
    expect(evaluateRange({ range: 'bytes=0-1', 'if-range': 'W/"a"' }, 10, { etag: 'W/"a"' })).toEqual({ kind: 'full' });
  });
  test('empty representation: any range is unsatisfiable', () => {
    expect(evaluateRange({ range: 'bytes=0-' }, 0, rep)).toEqual({ kind: 'unsatisfiable' });
  });
});
