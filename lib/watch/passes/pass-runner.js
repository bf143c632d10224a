import { batchPass } from './batch.js';
import { wholePass } from './whole-pass.js';
import { absPath } from '../../paths.js';
import { statIfThere } from '../../fs-atomic.js';
import { isOwnOutput, OwnOutputs } from './own-outputs.js';
import { wholePassReason, batchOutcome, WHY } from './pass-choice.js';

/** @typedef {import('../events/index.js').FileEvent} FileEvent */

/**
 * Runs watch mode's passes, a batch or a whole pass as pass-choice.js decides, and keeps what they
 * leave for the next one: the manifest in memory (with our outputs, own-outputs.js), the symlinks
 * to files, and the reason the next pass must be a whole one.
 */
export class PassRunner {
  /** our outputs and the manifest records (see isOwnOutput) */ #ours = new OwnOutputs();
  /** @type {Set<string>} symlinks to files in the tree, which every batch looks at */ #links = new Set();
  /** @type {string | null} why the next pass must be a whole one: events since the last cannot be trusted */
  #distrust = null;
  #root;
  #manifest;
  #manifestRel;
  #api;

  /**
   * @param {string} root absolute
   * @param {string} manifest absolute
   * @param {string | null} manifestRel
   * @param {object} api compressor options
   */
  constructor(root, manifest, manifestRel, api) {
    this.#root = root;
    this.#manifest = manifest;
    this.#manifestRel = manifestRel;
    this.#api = api;
  }

  /**
   * The next pass must be a whole one (the first reason given is kept).
   * @param {string | null} reason null: no change
   */
  distrust(reason) {
    this.#distrust ??= reason;
  }

  /**
   * Is this event about one of our own outputs, so that it must not start a batch?
   * @param {string} rel
   * @param {string} event
   */
  isOwn(rel, event) {
    const sizeOf = (/** @type {string} */ r) =>
      statIfThere(absPath(this.#root, r))?.size ?? null;
    return isOwnOutput(rel, event, { manifestRel: this.#manifestRel, ours: this.#ours, sizeOf });
  }

  /**
   * The batch's pass: over the events' paths and the files still being written, against the
   * records; or a whole pass, whose manifest becomes the records.
   * @param {{ event: FileEvent, path: string }[]} events
   * @param {boolean} initial
   * @param {import('../events/index.js').UnsettledFiles} unsettled
   */
  async run(events, initial, unsettled) {
    const records = this.#ours.records;
    const s = { initial, distrust: this.#distrust, hasRecords: records !== null, eventCount: events.length };
    let why = wholePassReason(s);
    if (why === null && records !== null) {
      why = wholePassReason({ ...s, manifestCurrent: await records.current(this.#manifest) });
    }
    if (why === null && records !== null) {
      const paths = [...events.map((e) => e.path), ...unsettled.files.keys()];
      const out = await this.#guard(WHY.batchFailed,
        () => batchPass(this.#root, this.#api, unsettled, { paths, records, links: this.#links }));
      const { now, next } = batchOutcome(out);
      if (now === null && out !== null) {
        this.distrust(next);
        this.#ours.update(out.report, records);
        return { report: out.report, held: out.held, whole: false };
      }
    }
    this.#distrust = null; // an event that cannot be trusted during this pass sets it again
    const whole = await this.#guard(WHY.passFailed, () => wholePass(this.#root, this.#api, unsettled, this.#manifest));
    const { report, held, records: next, links } = whole;
    this.#ours.update(report, next);
    this.#links = links;
    return { report, held, whole: true };
  }

  /**
   * `fn()`; when it throws, the next pass is a whole one.
   * @template T
   * @param {string} reason
   * @param {() => Promise<T>} fn
   */
  async #guard(reason, fn) {
    try {
      return await fn();
    } catch (err) {
      this.distrust(reason);
      throw err;
    }
  }
}
