import { Worker } from 'node:worker_threads';

/**
 * `size` CPU slots: lazy worker threads, or the calling thread holding a slot (`exclusive`). Small
 * jobs travel in batches sent ahead, so a worker never waits on a round trip; a slot that falls idle
 * takes back the batches not yet claimed (a word in shared memory), so none waits behind a long job.
 * Protocol: { id, tasks, claim } → { id, results: ({ result } | { error })[] } once claimBatch(claim).
 */

const WAITING = 0;
const CLAIMED = 1;
const REVOKED = 2;

/**
 * In a worker, at the start of a batch: is it still this worker's to run? (False: the pool gave
 * it to an idle worker meanwhile; drop it without replying.)
 * @param {Int32Array | undefined} claim
 */
export function claimBatch(claim) {
  return claim === undefined || Atomics.compareExchange(claim, 0, WAITING, CLAIMED) === WAITING;
}

/**
 * @typedef {{ task?: any, fn?: () => Promise<any>, cost: number, resolve: (v: any) => void, reject: (e: any) => void,
 *   alone?: boolean, started?: boolean }} Job
 *   alone: it was in a batch whose worker crashed; it now travels by itself. started: seen by onStart
 * @typedef {{ jobs: Job[], claim: Int32Array }} Batch
 * @typedef {{ worker: Worker | null, inflight: Map<number, Batch>, cost: number, exclusive: boolean, broken: boolean }} Slot
 */

class Pool {
  /** @type {Job[]} */
  queue = [];
  nextId = 0;
  closed = false;

  /**
   * @param {number} size
   * @param {URL} workerUrl
   * @param {{ batchCost?: number, aheadCost?: number, onStart?: (task: any) => void }} limits
   */
  constructor(size, workerUrl, limits) {
    this.workerUrl = workerUrl;
    this.batchCost = limits.batchCost ?? 0;
    this.aheadCost = limits.aheadCost ?? 0;
    this.onStart = limits.onStart ?? (() => {});
    /** @type {Slot[]} */
    this.slots = Array.from({ length: size }, () => ({ worker: null, inflight: new Map(), cost: 0, exclusive: false, broken: false }));
  }

  /**
   * A job's share of its slot's load (finite: a big job counts as just over aheadCost).
   * @param {Job} job
   */
  counted(job) {
    return Math.min(job.cost, this.aheadCost + 1);
  }

  /**
   * Take batch `id` off `slot`; its jobs are then the caller's to settle or requeue.
   * @param {Slot} slot
   * @param {number} id
   */
  release(slot, id) {
    const jobs = slot.inflight.get(id)?.jobs ?? [];
    slot.inflight.delete(id);
    if (slot.inflight.size === 0) slot.cost = 0; // (fractional costs: no drift)
    else for (const j of jobs) slot.cost -= this.counted(j);
    return jobs;
  }

  /**
   * @param {Slot} slot
   * @param {number} id
   * @param {(i: number) => { error?: Error, result?: unknown }} replies
   */
  settle(slot, id, replies) {
    this.release(slot, id).forEach((j, i) => {
      const r = replies(i);
      if (r.error) j.reject(r.error);
      else j.resolve(r.result);
    });
    this.pump();
  }

  /**
   * The worker of `slot` died (an uncaught error, or it exited). A worker runs its batches in the
   * order sent, so the first one in flight was running, or had just finished with its reply still
   * on the way (the error can overtake it): its jobs are retried one by one, each alone on a worker,
   * and only a job that crashes a worker while alone fails. The batches sent ahead go back to the
   * queue untouched.
   * @param {Slot} slot
   * @param {unknown} err
   */
  lost(slot, err) {
    slot.worker = null;
    /** @type {Job[]} */
    const retry = [];
    [...slot.inflight.keys()].forEach((id, n) => {
      for (const j of this.release(slot, id)) {
        if (n > 0) retry.push(j);
        else if (j.alone) j.reject(err);
        else retry.push(Object.assign(j, { alone: true }));
      }
    });
    this.queue.unshift(...retry);
    this.pump();
  }

  /** @param {Slot} slot */
  spawn(slot) {
    // A small young generation: a worker allocates little on its heap (its buffers live outside it),
    // and the default one is a large part of what each worker adds to the RSS.
    const worker = new Worker(this.workerUrl, { resourceLimits: { maxYoungGenerationSizeMb: 12 } });
    slot.worker = worker;
    /** @typedef {{ error?: { message: string, code?: string, changed?: boolean }, result?: unknown }} Reply */
    worker.on('message', (/** @type {{ id: number, results: Reply[] }} */ { id, results }) => this.settle(slot, id, (i) => {
      const r = results[i];
      return r.error ? { error: Object.assign(new Error(r.error.message), { code: r.error.code, changed: r.error.changed }) } : { result: r.result };
    }));
    worker.on('error', (err) => {
      if (slot.worker === worker) this.lost(slot, err);
    });
    // An exit without an error (process.exit() inside an encoder) would otherwise leave its jobs unsettled.
    worker.on('exit', (code) => {
      if (slot.worker === worker && !this.closed) this.lost(slot, new Error(`compression worker exited (code ${code})`));
    });
    return worker;
  }

  /**
   * Can `job` go to `slot` now?
   * @param {Slot} slot
   * @param {Job} job
   */
  fits(slot, job) {
    if (slot.exclusive || slot.broken) return false;
    if (slot.inflight.size === 0) return true;
    return job.fn === undefined && !job.alone && job.cost < this.aheadCost && slot.cost + job.cost <= this.aheadCost;
  }

  /** Hand out queued jobs while a slot takes them; then take back work waiting behind others for an idle slot. */
  pump() {
    while (!this.closed) {
      if (this.queue.length === 0 && !this.takeBack()) return;
      const job = this.queue[0];
      // the emptiest slot that takes it (an idle one first, whatever the costs)
      const load = (/** @type {Slot} */ s) => (s.inflight.size === 0 ? -1 : s.cost);
      /** @type {Slot | null} */
      let slot = null;
      for (const s of this.slots) if (this.fits(s, job) && (slot === null || load(s) < load(slot))) slot = s;
      if (slot === null) return;
      if (job.fn !== undefined) {
        this.queue.shift();
        this.runExclusive(slot, job);
        continue;
      }
      const worker = this.workerOf(slot);
      if (worker === null) return;
      if (worker !== undefined) this.send(slot, worker);
    }
  }

  /**
   * The worker of `slot`, started if needed. When none can be had (thread or memory limits) the
   * slot is broken: undefined while other workers run (they take the queue), else null after
   * failing the whole queue.
   * @param {Slot} slot
   * @returns {Worker | null | undefined}
   */
  workerOf(slot) {
    if (slot.worker !== null) return slot.worker;
    try {
      return this.spawn(slot);
    } catch (err) {
      slot.broken = true;
      if (this.slots.some((s) => !s.broken && (s.worker !== null || s.exclusive))) return undefined;
      for (const j of this.queue.splice(0)) j.reject(err);
      return null;
    }
  }

  /**
   * Send the head of the queue to `slot` as one batch: up to batchCost, and on a busy slot up to aheadCost in all.
   * @param {Slot} slot
   * @param {Worker} worker
   */
  send(slot, worker) {
    const { queue } = this;
    const room = slot.inflight.size === 0 ? this.batchCost : Math.min(this.batchCost, this.aheadCost - slot.cost);
    const first = /** @type {Job} */ (queue.shift());
    const jobs = [first];
    let cost = first.cost;
    while (!first.alone && queue.length > 0 && queue[0].fn === undefined && !queue[0].alone && cost + queue[0].cost <= room) {
      const next = /** @type {Job} */ (queue.shift());
      cost += next.cost;
      jobs.push(next);
    }
    const id = this.nextId++;
    const claim = new Int32Array(new SharedArrayBuffer(4));
    slot.inflight.set(id, { jobs, claim });
    for (const j of jobs) slot.cost += this.counted(j);
    for (const j of jobs) this.started(j);
    worker.postMessage({ id, tasks: jobs.map((j) => j.task), claim });
  }

  /**
   * onStart, once per job (a job taken back and sent again is not reported twice).
   * @param {Job} job
   */
  started(job) {
    if (job.started) return;
    job.started = true;
    this.onStart(job.task);
  }

  /**
   * With a slot idle and nothing queued: revoke the batches that wait, unclaimed, behind another
   * batch on a busy worker, and queue their jobs again (in order, at the front). The first batch
   * of a slot is never revoked: it is running or about to, and the slot stays busy with it, so
   * the jobs taken back go to the idle slot.
   * @returns {boolean} whether any job was taken back
   */
  takeBack() {
    const idle = this.slots.some((s) => s.inflight.size === 0 && !s.exclusive && !s.broken);
    if (!idle) return false;
    /** @type {Job[]} */
    const back = [];
    for (const slot of this.slots) {
      const waiting = [...slot.inflight].slice(1);
      for (const [id, batch] of waiting) {
        if (Atomics.compareExchange(batch.claim, 0, WAITING, REVOKED) === WAITING) back.push(...this.release(slot, id));
      }
    }
    this.queue.unshift(...back);
    return back.length > 0;
  }

  /**
   * @param {Slot} slot
   * @param {Job} job
   */
  runExclusive(slot, job) {
    slot.exclusive = true;
    this.started(job);
    const fn = /** @type {() => Promise<any>} */ (job.fn);
    Promise.resolve().then(fn).then(job.resolve, job.reject).finally(() => {
      slot.exclusive = false;
      this.pump();
    });
  }

  /** @param {Job} job */
  enqueue(job) {
    if (this.closed) return job.reject(new Error('pool is closed'));
    this.queue.push(job);
    this.pump();
  }

  /**
   * Run `task` in a worker.
   * @param {any} task
   * @param {number} [cost] estimated cost (jobs up to `batchCost` may share a message)
   * @returns {Promise<any>}
   */
  run(task, cost = Infinity) {
    return new Promise((resolve, reject) => this.enqueue({ task, cost, resolve, reject }));
  }

  /**
   * Run `fn` on this thread while it holds a whole slot (work that uses a core by other means,
   * such as streaming through the libuv pool).
   * @template T
   * @param {() => Promise<T>} fn
   * @param {any} [task] what `fn` does, for `onStart`
   * @returns {Promise<T>}
   */
  exclusive(fn, task) {
    return new Promise((resolve, reject) => this.enqueue({ fn, task, cost: Infinity, resolve, reject }));
  }

  /** Start every worker now (they load their modules while the caller prepares the work). */
  warm() {
    if (this.closed) return;
    try {
      for (const s of this.slots) if (s.worker === null && !s.broken) this.spawn(s);
    } catch {
      // Started on demand instead, where a failure is reported to the tasks.
    }
  }

  async close() {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new Error('pool is closed'));
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
    for (const s of this.slots) {
      s.worker = null;
      for (const id of [...s.inflight.keys()]) this.settle(s, id, () => ({ error: new Error('pool is closed') }));
    }
  }
}

/**
 * @param {number} size
 * @param {URL} workerUrl see the top of this file for the messages it answers
 * @param {{ batchCost?: number, aheadCost?: number, onStart?: (task: any) => void }} [limits] costs in the caller's
 *   units; `onStart` sees each job's task once, as it is handed to a slot, in the order a slot runs them
 */
export function createPool(size, workerUrl, limits = {}) {
  return new Pool(size, workerUrl, limits);
}
