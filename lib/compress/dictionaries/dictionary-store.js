import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { isRealFolder, notRealFolder, readRegularFile, writeAtomicSync } from '../../fs-atomic.js';
import { contentHash } from '../../manifest/manifest.js';
import { DELTA_MAX_SIZE } from './delta-encode.js';

/**
 * The dictionary store (docs/deltas.md): earlier versions of each family, outside the output folder so
 * that they survive builds that empty it; every object checked against its name when read.
 */

/**
 * What the delta steps use of a dictionary store; a remote one implements it too.
 * @typedef {{ hash: string, bytes: () => Promise<Buffer> }} Version
 * @typedef {object} DictionaryStore
 * @property {string} dir where it is, for messages
 * @property {(key: string) => string[]} versions hashes of a family's stored versions, newest first
 * @property {(hash: string) => Promise<Buffer | null>} read a version's bytes, null when missing or not
 *   what its hash says
 * @property {(versions: Version[]) => Promise<string[]>} put store versions; resolves to the hashes stored
 * @property {(current: Map<string, Version[]>, keep: number) => Promise<number>} record make this build's
 *   versions the newest of their families, keep `keep` builds' worth; resolves to the families changed
 * @property {() => Promise<void>} makeFolders make the store's folders (record() does it too): ahead of it,
 *   while a pass compresses (#31)
 */

/**
 * The dictionary store of a pass: the folder of its output folder under `dictionaryStore`.
 * @param {{ dictionaryStore: string, root: string }} opts
 * @returns {Promise<DictionaryStore>}
 */
export function openDictionaryStore(opts) {
  return openStore(storeFolderFor(opts.dictionaryStore, opts.root));
}

const INDEX = 'index.json';
const STORE_SCHEMA = 1;
/** The index lists hashes only: far below this even for a store of 100,000 families. */
const INDEX_MAX = 64 * 1024 * 1024;

/**
 * @param {string} storeRoot
 * @param {string} root absolute output folder
 */
export function storeFolderFor(storeRoot, root) {
  const id = path.relative(process.cwd(), root).split(path.sep).join('/') || '.';
  const slug = path.basename(root).replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40);
  return path.join(storeRoot, `${slug}-${crypto.createHash('sha256').update(id).digest('hex').slice(0, 12)}`);
}

const objectName = (/** @type {string} */ hash) => hash.replace(/^sha256-/, '');
const isHash = (/** @type {unknown} */ h) => typeof h === 'string' && /^sha256-[A-Za-z0-9_-]{43}$/.test(h);
const isObjectName = (/** @type {string} */ name) => /^[A-Za-z0-9_-]{43}$/.test(name);

/**
 * The families of a store's index; none when it is missing, not a regular file or not valid.
 * @param {string} dir
 * @returns {Promise<Record<string, string[]>>}
 */
async function readIndex(dir) {
  const families = Object.create(null);
  try {
    const data = JSON.parse((await readRegularFile(path.join(dir, INDEX), INDEX_MAX))?.toString('utf8') ?? 'null');
    if (data?.schema === STORE_SCHEMA && data.families && typeof data.families === 'object') {
      for (const [k, v] of Object.entries(data.families)) {
        if (Array.isArray(v) && v.every(isHash)) families[k] = v;
      }
    }
    return families;
  } catch {
    return Object.create(null);
  }
}

/**
 * @param {string} dir the store's folder
 * @param {string} objects its objects' folder
 */
async function makeFolders(dir, objects) {
  // mkdir would create `objects` through a symlinked store folder
  if (!(await fs.lstat(dir).then((st) => st.isDirectory(), () => true))) throw notRealFolder(dir);
  await fs.mkdir(objects, { recursive: true });
}

/**
 * @param {string} dir from storeFolderFor()
 */
export async function openStore(dir) {
  const families = await readIndex(dir);
  const objects = path.join(dir, 'objects');
  /** Throw unless the store's folders are folders, not symlinks: right before each write or removal. */
  const assertReal = () => {
    for (const d of [dir, objects]) if (!isRealFolder(d)) throw notRealFolder(d);
  };

  return {
    dir,
    /** Hashes of the stored versions of a family, newest first. */
    versions: (/** @type {string} */ key) => families[key] ?? [],
    /**
     * The bytes of a stored version, or null when missing or not what its name says.
     * @param {string} hash
     */
    async read(hash) {
      const buf = await readRegularFile(path.join(objects, objectName(hash)), DELTA_MAX_SIZE);
      return buf !== null && contentHash(buf) === hash ? buf : null;
    },
    /**
     * Write the objects of `versions` that are not there yet; returns the hashes stored.
     * @param {{ hash: string, bytes: () => Promise<Buffer> }[]} versions
     */
    async put(versions) {
      /** @type {string[]} */
      const kept = [];
      for (const v of versions) {
        const file = path.join(objects, objectName(v.hash));
        // A FIFO or a symlink of that name is replaced (the rename acts on the name only).
        if (!(await fs.lstat(file).then((st) => st.isFile(), () => false))) {
          const bytes = await v.bytes().catch(() => null);
          if (bytes === null || contentHash(bytes) !== v.hash) continue;
          assertReal();
          // Renamed into place but not fsync'd: read() checks an object against its name (its hash).
          writeAtomicSync(file, bytes);
        }
        kept.push(v.hash);
      }
      return kept;
    },
    makeFolders: () => makeFolders(dir, objects),
    /**
     * Make the given versions the newest of their family, keep `keep` builds' worth, and remove the
     * objects nothing lists any more.
     * @param {Map<string, { hash: string, bytes: () => Promise<Buffer> }[]>} current family key → this build's versions
     * @param {number} keep
     * @returns {Promise<number>} families changed
     */
    async record(current, keep) {
      let added = 0;
      await makeFolders(dir, objects);
      for (const [key, versions] of current) {
        const list = families[key] ?? [];
        const fresh = versions.every((v, i) => list[i] === v.hash);
        const kept = fresh ? versions.map((v) => v.hash) : await this.put(versions);
        const next = [...kept, ...list.filter((h) => !kept.includes(h))].slice(0, keep * Math.max(1, kept.length));
        if (next.length === list.length && next.every((h, i) => list[i] === h)) continue;
        families[key] = next;
        added++;
      }
      if (added === 0) return 0;
      assertReal();
      // Not fsync'd either: an index cut by a power loss does not parse, and readIndex() starts afresh.
      writeAtomicSync(path.join(dir, INDEX), Buffer.from(JSON.stringify({ schema: STORE_SCHEMA, families }) + '\n'));
      const listed = new Set(Object.values(families).flat().map(objectName));
      for (const name of await fs.readdir(objects)) {
        if (listed.has(name) || !isObjectName(name)) continue;
        assertReal();
        await fs.unlink(path.join(objects, name)).catch((err) => {
          if (err.code !== 'ENOENT') throw err;
        });
      }
      return added;
    },
  };
}
