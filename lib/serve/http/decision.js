/**
 * The serving core's vocabulary (lib/serve/core/core.js): what a request is for it, and the decisions it
 * hands to an adapter. Types only, and importing none, so that every part may name them.
 */

/**
 * @typedef {{ method?: string, url?: string, originalUrl?: string,
 *   headers: Record<string, string | string[] | undefined> }} RequestInfo  url: the request target
 *   below the mount point; originalUrl: before a mount removed its prefix (redirects keep it)
 * @typedef {{
 *   statusCode: number, getHeader(name: string): number | string | string[] | undefined,
 *   hasHeader(name: string): boolean, setHeader(name: string, value: number | string | readonly string[]): unknown,
 *   removeHeader(name: string): void,
 * }} ResponseHeaders  what an earlier handler or `setHeaders` set (node's ServerResponse is one)
 * @typedef {{ fd: number, start: number, end: number, stat?: import('node:fs').Stats }} FileRange
 *   bytes [start, end] of an open descriptor: the adapter sends them and closes it; stat: its fstat,
 *   checked again before the last byte
 * @typedef {{ kind: 'reply', status: number, head: string[], body: Buffer | FileRange | null }} Reply
 *   head: header name/value pairs, over those set before as writeHead() merges them
 * @typedef {Reply
 *   | { kind: 'pass', status: number, cause?: Error }
 *   | { kind: 'method', reply: Reply }
 *   | { kind: 'reject', status: 412 | 416, head: string[], headers: Record<string, string>, reply: Reply }
 *   | { kind: 'error', error: Error }
 *   | { kind: 'gone' }
 * } Decision  pass: not ours (the app goes on; where nothing follows, `status`; `cause`: the system error of
 *   the miss, as express.static passes it); method: neither GET nor HEAD
 *   (passed on with fallthrough, else `reply`); reject: a 412/416, to an error handler as express.static
 *   passes it (the metadata `head` kept, `headers` added) or else `reply`; error: a system error (500);
 *   gone: the client went away, nothing to write
 */

export {};
