import path from 'node:path';
import { contentHash, sha256 } from '../../manifest/manifest.js';
import { encodeActionResult } from '../cache/index.js';

/**
 * The dictionary store through the remote cache, so that a fresh runner finds earlier versions: each a
 * CAS blob used only when it hashes to the recorded SHA-256, the index under `/ac/` by the store's id.
 *
 * @typedef {import('./dictionary-store.js').DictionaryStore} Store
 */

const HASH = /^sha256-[A-Za-z0-9_-]{43}$/;

/** @param {string} hash `sha256-<base64url>` */
const hexOf = (hash) => Buffer.from(hash.slice(7), 'base64url').toString('hex');

/**
 * @param {string} storeDir the local store's folder (its name is the output folder's id)
 */
export const indexKey = (storeDir) => sha256(`precompressor dictionary index 1\0${path.basename(storeDir)}`, 'hex');

/**
 * The remote's index of a store: family → version hashes; empty when none or not valid.
 * @param {import('../cache/index.js').RemoteEntries} remote
 * @param {string} key
 * @returns {Promise<Map<string, string[]>>}
 */
async function remoteIndex(remote, key) {
  const got = await remote.entry(key, false);
  const families = new Map();
  try {
    const data = got?.data ? JSON.parse(got.data.toString('utf8')) : null;
    if (data?.schema !== 1 || typeof data.families !== 'object' || data.families === null) return families;
    for (const [k, v] of Object.entries(data.families)) {
      if (Array.isArray(v) && v.every((h) => typeof h === 'string' && HASH.test(h))) families.set(k, v);
    }
  } catch {
    // not ours: an empty index
  }
  return families;
}

/**
 * The store with the remote behind it (the store itself when there is no remote).
 * @param {Store} store
 * @param {import('../cache/index.js').RemoteEntries | null | undefined} remote
 * @returns {Promise<Store>}
 */
export async function withRemote(store, remote) {
  if (!remote) return store;
  const key = indexKey(store.dir);
  const families = await remoteIndex(remote, key);
  return {
    ...store,
    versions: (/** @type {string} */ family) => {
      const local = store.versions(family);
      return local.length > 0 ? local : families.get(family) ?? [];
    },
    async read(/** @type {string} */ hash) {
      const local = await store.read(hash);
      if (local !== null || !HASH.test(hash)) return local;
      const bytes = await remote.http.get('cas', hexOf(hash));
      // As a local object: only bytes that hash to the SHA-256 recorded for that version.
      return bytes !== null && contentHash(bytes) === hash ? bytes : null;
    },
    async record(/** @type {Parameters<Store['record']>[0]} */ current, /** @type {number} */ keep) {
      const changed = await store.record(current, keep);
      await publish(remote, key, store, families, { current, keep });
      return changed;
    },
  };
}

/**
 * Upload the versions of `current` the remote lacks, then the index merged with the remote's.
 * @param {import('../cache/index.js').RemoteEntries} remote
 * @param {string} key
 * @param {Store} store
 * @param {Map<string, string[]>} families
 * @param {{ current: Parameters<Store['record']>[0], keep: number }} recorded what the build recorded, and
 *   how many builds' worth of versions a family keeps
 */
async function publish(remote, key, store, families, { current, keep }) {
  const { http } = remote;
  if (http.readOnly || http.down !== null) return;
  const next = new Map(families);
  const uploads = [];
  for (const [family, versions] of current) {
    const listed = store.versions(family);
    const older = (families.get(family) ?? []).filter((h) => !listed.includes(h));
    next.set(family, [...listed, ...older].slice(0, keep * Math.max(1, versions.length)));
    for (const v of versions) {
      if (!listed.includes(v.hash)) continue;
      uploads.push((async () => {
        if (await http.has('cas', hexOf(v.hash))) return;
        const bytes = await v.bytes().catch(() => null);
        if (bytes !== null && contentHash(bytes) === v.hash) await http.put('cas', hexOf(v.hash), bytes);
      })());
    }
  }
  await Promise.all(uploads);
  const same = [...current.keys()].every((f) => JSON.stringify(families.get(f)) === JSON.stringify(next.get(f)));
  if (same) return;
  const index = Buffer.from(JSON.stringify({ schema: 1, families: Object.fromEntries(next) }));
  const hex = sha256(index, 'hex');
  if (!(await http.put('cas', hex, index))) return;
  const rec = { key, size: index.length, bytes: index.length, encodeMs: 0, sha256: hex };
  await http.put('ac', key, encodeActionResult(rec));
}
