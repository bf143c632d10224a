import { entryOf, deltaStem, deltasOf } from '../../manifest/manifest.js';
import { variantPath, suffixOf, suffixEncoding, stemOf } from '../../encodings.js';

/** @typedef {import('../../encodings.js').Encoding} Encoding */

/**
 * Whose is a file at one of our output paths (pure)? Ours when the previous manifest records it, with
 * its size, and it is no newer; or when it decodes to X's bytes, or to a content recorded with a variant
 * of that encoding and size. Else the user's: never touched, and X gets no variant of that encoding.
 */

/** Slack (ms) between a file's mtime and the manifest's `generatedAt`: the file system rounds timestamps. */
export const MTIME_SLACK_MS = 1;

/**
 * @param {import("../../manifest/manifest.js").Manifest | null} previous
 */
export function writtenAt(previous) {
  const at = Date.parse(previous?.generatedAt ?? '');
  return Number.isNaN(at) ? Infinity : at + MTIME_SLACK_MS;
}

/**
 * The file a delta-named path belongs to, or null (the regular expression only for `.dcb`/`.dcz` names).
 * @param {string} rel
 */
function deltaStemOf(rel) {
  return rel.endsWith('.dcz') || rel.endsWith('.dcb') ? deltaStem(rel) : null;
}

/**
 * Does the previous manifest record `file` as ours, with its size, and is it no newer?
 * @param {{ rel: string, size: number, mtimeMs: number }} file
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 * @param {number} [at] writtenAt(previous), when the caller asks for many files
 */
export function recordedOurs(file, previous, at = writtenAt(previous)) {
  if (previous === null) return false;
  const dStem = deltaStemOf(file.rel);
  if (dStem !== null) {
    const entry = entryOf(previous, dStem);
    if (file.mtimeMs > at) return false;
    const hit = deltasOf(dStem, entry).find(([, , p]) => p === file.rel);
    if (hit === undefined) return false;
    const [dict, enc] = hit;
    return /** @type {any} */ (entry).deltas[dict][enc].size === file.size;
  }
  const enc = suffixEncoding(file.rel);
  if (enc === undefined) return false;
  const e = entryOf(previous, stemOf(file.rel, enc));
  const notNewer = e !== undefined && file.mtimeMs <= Math.max(at, (e.mtimeMs ?? -Infinity) + MTIME_SLACK_MS);
  const v = notNewer ? e.variants : undefined;
  return v !== undefined && Object.hasOwn(v, enc) && v[/** @type {Encoding} */ (enc)]?.size === file.size;
}

/**
 * @typedef {{ rel: string, stem: string, encoding: string, size: number }} Check
 *   a file that is ours only if it decodes to its stem's bytes (or to a content we made a variant of)
 * @typedef {{ ours: Set<string>, check: Check[], user: Set<string> }} Claims
 */

/**
 * Sort the files at our output paths into ours, to check (decode and compare), and the user's.
 * @param {import('./walk.js').WalkEntry[]} files
 * @param {string | null} manifestRel
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 * @param {{ adoptable: (stem: import('./walk.js').WalkEntry, encoding: string) => boolean }} ctx whether
 *   this pass would write that variant of that file (then a copy of ours found there may be adopted)
 * @returns {Claims}
 */
export function claimsOf(files, manifestRel, previous, ctx) {
  /** @type {Map<string, import('./walk.js').WalkEntry> | null} made on the first claim (most folders have none) */
  let byRel = null;
  const at = writtenAt(previous);
  /** @type {Claims} */
  const claims = { ours: new Set(), check: [], user: new Set() };
  for (const f of files) {
    const dStem = deltaStemOf(f.rel);
    const enc = dStem === null ? suffixEncoding(f.rel) : undefined;
    const stem = dStem ?? (enc === undefined ? null : stemOf(f.rel, enc));
    if (stem === null || f.rel === manifestRel) continue;
    if (recordedOurs(f, previous, at)) {
      claims.ours.add(f.rel);
      continue;
    }
    byRel ??= new Map(files.map((x) => [x.rel, x]));
    const source = stem === manifestRel ? undefined : byRel.get(stem);
    if (source === undefined) continue; // beside no file: an ordinary file, not at one of our paths
    const check = enc !== undefined && ctx.adoptable(source, enc);
    if (check) claims.check.push({ rel: f.rel, stem, encoding: /** @type {string} */ (enc), size: f.size });
    else claims.user.add(f.rel);
  }
  return claims;
}

/**
 * The content hashes (and sizes) of the sources of the variants the previous manifest records, by
 * encoding and size (`"br 1234"`).
 * @param {import('../../manifest/manifest.js').Manifest | null} previous
 * @returns {Map<string, Map<string, number>>}
 */
export function recordedVariants(previous) {
  const out = new Map();
  const files = previous?.files ?? {};
  for (const rel in files) {
    const e = Object.hasOwn(files, rel) ? files[rel] : undefined;
    if (typeof e?.hash !== 'string') continue;
    for (const [enc, v] of Object.entries(e.variants ?? {})) {
      const key = `${enc} ${v?.size}`;
      if (!out.has(key)) out.set(key, new Map());
      out.get(key).set(e.hash, e.size);
    }
  }
  return out;
}

/**
 * Files of the user's at variant paths that look like ours of another content: two or more of one file
 * that decode to the same bytes, not its own.
 * @param {{ rel: string, stem: string, hash: string }[]} others what each decodes to
 * @returns {Map<string, string[]>} such a file → the files of its group
 */
export function lookAlikes(others) {
  /** @type {Map<string, string[]>} */
  const groups = new Map();
  for (const o of others) {
    const key = `${o.stem}\0${o.hash}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)?.push(o.rel);
  }
  const out = new Map();
  for (const rels of groups.values()) {
    if (rels.length > 1) for (const rel of rels) out.set(rel, [...rels].sort());
  }
  return out;
}

/**
 * @param {Iterable<string>} user
 * @returns {Map<string, Set<string>>} source path → encodings
 */
export function blockedEncodings(user) {
  const out = new Map();
  for (const rel of user) {
    const enc = suffixEncoding(rel);
    if (enc === undefined || deltaStem(rel) !== null) continue;
    const stem = stemOf(rel, enc);
    if (!out.has(stem)) out.set(stem, new Set());
    out.get(stem).add(enc);
  }
  return out;
}

/**
 * The warning for a file of the user's at the path of a variant of `stem`, and how to resolve it.
 * @param {string} rel the user's file
 * @param {string} stem the file whose variant it stands in the way of
 * @param {string} what e.g. ".gz variant", "dcz delta"
 */
export function userFileMessage(rel, stem, what) {
  return `not written by precompressor: kept as your own file and served as itself; ${stem} gets no ${what}. ` +
    `To resolve: rename or remove ${rel}, or exclude ${stem}`;
}

/**
 * One warning per file of the user's in the way of a variant this pass would write.
 * @param {{ action: string, file: { rel: string }, blocked?: Set<string> }[]} decisions
 * @param {Map<string, string[]>} [alike] lookAlikes()
 * @returns {{ path: string, message: string }[]}
 */
export function userFileWarnings(decisions, alike = new Map()) {
  const out = [];
  for (const d of decisions) {
    if (!d.blocked || d.action === 'skip' || d.action === 'hold') continue;
    for (const enc of d.blocked) {
      const rel = variantPath(d.file.rel, /** @type {Encoding} */ (enc));
      const message = userFileMessage(rel, d.file.rel, `${suffixOf(enc)} variant`);
      const group = alike.get(rel);
      out.push({ path: rel, message: group === undefined ? message : lookAlikeMessage(d.file.rel, group, message) });
    }
  }
  return out;
}

/**
 * The warning for a file of lookAlikes(): the user-file message, and why it looks like ours.
 * @param {string} stem
 * @param {string[]} group
 * @param {string} message userFileMessage()
 */
function lookAlikeMessage(stem, group, message) {
  return `looks like a variant precompressor made of another content of ${stem} (${group.join(' and ')} ` +
    'decode to the same bytes; a folder moved or copied with its variants?), but no record says so: ' +
    `${message.replace(/^not written by precompressor: /, '')}. If precompressor made it, remove it`;
}
