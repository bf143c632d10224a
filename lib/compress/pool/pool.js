import { JobQueue } from './queue.js';
import { Slot, WAITING, CLAIMED } from './slot.js';

/**
 * `size` CPU slots: lazy worker threads, or the calling thread holding a slot (`exclusive`). Small
 * jobs travel in batches sent ahead, so a worker never waits on a round trip; a slot that falls idle
 * takes back the batches not yet claimed (a word in shared memory), so none waits behind a long job.
 * Protocol: { id, tasks, claim } → { id, results: ({ result } | { error })[] } once claimBatch(claim).
 * The queue is lib/compress/pool/queue.js, a slot and its worker lib/compress/pool/slot.js.
 */

/**
 * In a worker: is this batch still its to run (not given to an idle worker meanwhile)?
 * @param {Int32Array | undefined} claim
 */
export function claimBatch(claim) {
  return claim === undefined || Atomics.compareExchange(claim, 0, WAITING, CLAIMED) === WAITING;
}

/** @typedef {import('./queue.js').Job} Job */

/**
 * The worker of `slot`, started if needed; when none can be had, undefined while others run, else
 * null after failing the queue.
 * @param {Slot} slot
 * @param {readonly Slot[]} slots
 * @param {JobQueue} queue
 */
function workerOf(slot, slots, queue) {
  if (slot.worker !== null) return slot.worker;
  try {
    return slot.spawn();
  } catch (err) {
    slot.broken = true;
    if (slots.some((s) => !s.broken && (s.worker !== null || s.exclusive))) return undefined;
    queue.rejectAll(err);
    return null;
  }
}

/**
 * With a slot idle and nothing queued: the batches waiting behind another go back to the queue.
 * @param {readonly Slot[]} slots
 * @param {JobQueue} queue
 * @returns {boolean} whether any job was taken back
 */
function takeBack(slots, queue) {
  if (!slots.some((s) => s.idle)) return false;
  const back = slots.flatMap((s) => s.revokeWaiting());
  queue.requeue(back);
  return back.length > 0;
}

/**
 * Pump `pool` at the next turn of the event loop (once, however often asked), partial batches too.
 * @param {Pool} pool
 */
function pumpLater(pool) {
  if (pool.later) return;
  pool.later = true;
  setImmediate(() => {
    pool.later = false;
    pool.flushing = true;
    try {
      pool.pump();
    } finally {
      pool.flushing = false;
    }
  });
}

/**
 * onStart, once per job (a job taken back and sent again is not reported twice).
 * @param {Pool} pool
 * @param {Job} job
 */
function started(pool, job) {
  if (job.started) return;
  job.started = true;
  pool.onStart(job.task);
}

class Pool {
  queue = new JobQueue();
  nextId = 0;
  closed = false;
  /** each worker collects fully after this many tasks (lib/util/heap-pace.js), 0: never by count */
  collectEvery = 0;
  /** pump() at the next turn (pumpLater()); this pump() is that one */
  later = false;
  flushing = false;

  /**
   * @param {number} size
   * @param {URL} workerUrl
   * @param {{ batchCost?: number, aheadCost?: number, onStart?: (task: any) => void }} limits
   */
  constructor(size, workerUrl, limits) {
    this.batchCost = limits.batchCost ?? 0;
    this.onStart = limits.onStart ?? (() => {});
    /** @type {import('./slot.js').SlotEvents} */
    const events = {
      onReply: (slot, id, results) => this.settle(slot, id, results),
      onLost: (slot, err) => {
        this.queue.requeue(slot.lost(err));
        this.pump();
      },
      closed: () => this.closed,
    };
    this.slots = Array.from({ length: size }, () => new Slot(limits.aheadCost ?? 0, workerUrl, events));
    /** the slots given work: all, or fewer (limit()) */
    this.used = this.slots;
  }

  /**
   * Batch `id` of `slot` is done: settle its jobs.
   * @param {Slot} slot
   * @param {number} id
   * @param {{ error?: Error, result?: unknown }[]} results
   */
  settle(slot, id, results) {
    slot.release(id).forEach((j, i) => {
      const r = results[i];
      if (r.error) j.reject(r.error);
      else j.resolve(r.result);
    });
    this.pump();
  }

  /** Hand out queued jobs while a slot takes them; then take back work waiting behind others for an idle slot. */
  pump() {
    while (!this.closed) {
      if (this.queue.size === 0 && !takeBack(this.used, this.queue)) return;
      const job = /** @type {Job} */ (this.queue.head());
      /** @type {Slot | null} the emptiest slot that takes it */
      let slot = null;
      for (const s of job.cost <= this.batchCost ? this.used : this.slots) {
        if (s.fits(job) && (slot === null || s.load() < slot.load())) slot = s;
      }
      if (slot === null) return;
      if (job.fn !== undefined) {
        this.runExclusive(slot, this.queue.shift());
        continue;
      }
      // A busy worker gets a part of a batch only once this turn of the event loop has queued what it
      // will: jobs queued one by one (files admitted as others end) would travel one per message.
      if (!slot.idle && !this.flushing && !this.queue.holds(slot.room(this.batchCost))) return pumpLater(this);
      const worker = workerOf(slot, this.slots, this.queue);
      if (worker === null) return;
      if (worker === undefined) continue;
      const jobs = this.queue.takeBatch(slot.room(this.batchCost));
      for (const j of jobs) started(this, j);
      slot.send(worker, this.nextId++, jobs, this.collectEvery);
    }
  }

  /**
   * Give small jobs (up to batchCost) to `n` slots only (the caller takes a core's share of them
   * itself), or to all again; big ones go to any.
   * @param {number} n
   */
  limit(n) {
    this.used = this.slots.slice(0, Math.max(1, Math.min(n, this.slots.length)));
    this.pump();
  }

  /**
   * @param {Slot} slot
   * @param {Job} job
   */
  runExclusive(slot, job) {
    slot.exclusive = true;
    started(this, job);
    Promise.resolve().then(job.fn).then(job.resolve, job.reject).finally(() => {
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

  /** Has a worker been started? */
  get spawned() {
    return this.slots.some((s) => s.worker !== null);
  }

  /** Start every worker now (they load their modules while the caller prepares the work). */
  warm() {
    if (this.closed) return;
    try {
      for (const s of this.slots) if (s.worker === null && !s.broken) s.spawn();
    } catch {
      // Started on demand instead, where a failure is reported to the tasks.
    }
  }

  async close() {
    this.closed = true;
    this.queue.rejectAll(new Error('pool is closed'));
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
    for (const s of this.slots) {
      s.worker = null;
      for (const id of [...s.inflight.keys()]) for (const j of s.release(id)) j.reject(new Error('pool is closed'));
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
