import { Worker } from 'node:worker_threads';

/**
 * @typedef {import('./queue.js').Job} Job
 * @typedef {{ jobs: Job[], claim: Int32Array }} Batch
 * @typedef {{ error?: Error, result?: unknown }} Settled
 * @typedef {{ onReply: (slot: Slot, id: number, results: Settled[]) => void,
 *   onLost: (slot: Slot, err: unknown) => void,
 *   closed: () => boolean }} SlotEvents
 */

export const WAITING = 0;
export const CLAIMED = 1;
const REVOKED = 2;

/** A worker's young generation, in MB (see spawn()). */
const YOUNG_MB = 4;

/** One CPU slot: its worker thread (started on demand), the batches in flight on it and their cost. */
export class Slot {
  /** @type {Worker | null} */
  worker = null;
  /** @type {Map<number, Batch>} in the order sent; a worker runs them in that order */
  inflight = new Map();
  cost = 0;
  /** work on the calling thread holds the slot */
  exclusive = false;
  /** no worker could be started */
  broken = false;

  /**
   * @param {number} aheadCost how much work a busy slot is given ahead
   * @param {URL} workerUrl
   * @param {SlotEvents} events
   */
  constructor(aheadCost, workerUrl, events) {
    this.aheadCost = aheadCost;
    this.workerUrl = workerUrl;
    this.events = events;
  }

  get idle() {
    return this.inflight.size === 0 && !this.exclusive && !this.broken;
  }

  /** The slot's load when choosing one: an idle slot first, whatever the costs. */
  load() {
    return this.inflight.size === 0 ? -1 : this.cost;
  }

  /**
   * A job's share of the slot's load (finite: a big job counts as just over aheadCost).
   * @param {Job} job
   */
  counted(job) {
    return Math.min(job.cost, this.aheadCost + 1);
  }

  /**
   * Can `job` go to this slot now? A busy slot takes only small work, up to aheadCost in all.
   * @param {Job} job
   */
  fits(job) {
    if (this.exclusive || this.broken) return false;
    if (this.inflight.size === 0) return true;
    return job.fn === undefined && !job.alone && job.cost < this.aheadCost && this.cost + job.cost <= this.aheadCost;
  }

  /** Room for the next batch: `batchCost`, and on a busy slot what is left of aheadCost. @param {number} batchCost */
  room(batchCost) {
    return this.inflight.size === 0 ? batchCost : Math.min(batchCost, this.aheadCost - this.cost);
  }

  /**
   * Send `jobs` as batch `id` to the worker, with the claim word it sets when it starts them.
   * @param {Worker} worker
   * @param {number} id
   * @param {Job[]} jobs
   * @param {number} [collectEvery] the worker collects fully after this many tasks (0: never by count)
   */
  send(worker, id, jobs, collectEvery = 0) {
    const claim = new Int32Array(new SharedArrayBuffer(4));
    this.inflight.set(id, { jobs, claim });
    for (const j of jobs) this.cost += this.counted(j);
    worker.postMessage({ id, tasks: jobs.map((j) => j.task), claim, collectEvery });
  }

  /**
   * Take batch `id` off the slot; its jobs are then the caller's to settle or requeue.
   * @param {number} id
   */
  release(id) {
    const jobs = this.inflight.get(id)?.jobs ?? [];
    this.inflight.delete(id);
    if (this.inflight.size === 0) this.cost = 0; // (fractional costs: no drift)
    else for (const j of jobs) this.cost -= this.counted(j);
    return jobs;
  }

  /**
   * Revoke the batches waiting, unclaimed, behind the first (which is running or about to): their jobs.
   * @returns {Job[]}
   */
  revokeWaiting() {
    /** @type {Job[]} */
    const back = [];
    for (const [id, batch] of [...this.inflight].slice(1)) {
      if (Atomics.compareExchange(batch.claim, 0, WAITING, REVOKED) === WAITING) back.push(...this.release(id));
    }
    return back;
  }

  /**
   * The worker died: the jobs of its first batch (the one running) are retried each alone, and one that
   * crashes a worker alone fails; the batches sent ahead go back as they are.
   * @param {unknown} err
   * @returns {Job[]}
   */
  lost(err) {
    this.worker = null;
    /** @type {Job[]} */
    const retry = [];
    [...this.inflight.keys()].forEach((id, n) => {
      for (const j of this.release(id)) {
        if (n > 0) retry.push(j);
        else if (j.alone) j.reject(err);
        else retry.push(Object.assign(j, { alone: true }));
      }
    });
    return retry;
  }

  /** Start the slot's worker (throws when the thread cannot be had). */
  spawn() {
    // A small young generation: a worker allocates little on its heap (its buffers live outside it),
    // and the default one is a large part of what each worker adds to the RSS.
    const worker = new Worker(this.workerUrl, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB } });
    this.worker = worker;
    const { events } = this;
    /** @typedef {{ error?: { message: string, code?: string, changed?: boolean }, result?: unknown }} Reply */
    const settled = (/** @type {Reply} */ r) => (r.error
      ? { error: Object.assign(new Error(r.error.message), { code: r.error.code, changed: r.error.changed }) }
      : { result: r.result });
    worker.on('message', (/** @type {{ id: number, results: Reply[] }} */ { id, results }) => {
      events.onReply(this, id, results.map(settled));
    });
    // The loss is handled at 'exit', not 'error': Node delivers the worker's last replies before 'exit',
    // while its error comes on another port and may overtake them (a batch answered would be taken for
    // the crash). An exit without an error (process.exit() inside an encoder) fails its jobs too.
    /** @type {unknown} */
    let failure = null;
    worker.on('error', (err) => {
      failure ??= err;
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker || events.closed()) return;
      events.onLost(this, failure ?? new Error(`compression worker exited (code ${code})`));
    });
    return worker;
  }
}
