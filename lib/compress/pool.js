import { Worker } from 'node:worker_threads';

/**
 * A pool of `size` CPU slots: worker threads, created lazily on the first task and closed by the
 * caller, or work run on the calling thread that holds a slot while it runs (`exclusive`).
 * Jobs are handed out in the order they were queued (the caller queues the most expensive first).
 *
 * Small jobs travel in batches (one message, one reply) and a worker is given its next batch
 * before it finishes the current one, so that it never waits on a round trip through this thread:
 * on 7,000 small files that round trip left each worker idle 6 % of the run, and one message per
 * file cost about 0.1 ms of this thread's time. A job whose cost reaches `aheadCost` is only
 * given to a slot with nothing in flight, so that the largest jobs still start first.
 *
 * @param {number} size
 * @param {URL} workerUrl module that answers { id, tasks } with { id, results: ({ result } | { error })[] }
 * @param {{ batchCost?: number, aheadCost?: number, onStart?: (task: any) => void }} [limits] costs in the caller's
 *   units; `onStart` sees each job's task as it is handed to a slot, in the order a slot runs them
 */
export function createPool(size, workerUrl, limits = {}) {
  const batchCost = limits.batchCost ?? 0;
  const aheadCost = limits.aheadCost ?? 0;
  const onStart = limits.onStart ?? (() => {});
  /**
   * @typedef {{ task?: any, fn?: () => Promise<any>, cost: number, resolve: (v: any) => void, reject: (e: any) => void,
   *   alone?: boolean }} Job  alone: it was in a batch whose worker crashed; it now travels by itself
   */
  /** @type {{ worker: Worker | null, inflight: Map<number, Job[]>, cost: number, exclusive: boolean, broken: boolean }[]} */
  const slots = Array.from({ length: size }, () => ({ worker: null, inflight: new Map(), cost: 0, exclusive: false, broken: false }));
  /** @type {Job[]} */
  const queue = [];
  let nextId = 0;
  let closed = false;

  /** Take batch `id` off `slot`; its jobs are then the caller's to settle or requeue. */
  function release(slot, id) {
    const jobs = slot.inflight.get(id) ?? [];
    slot.inflight.delete(id);
    if (slot.inflight.size === 0) slot.cost = 0; // (fractional costs: no drift)
    else for (const j of jobs) slot.cost -= counted(j);
    return jobs;
  }

  function settle(slot, id, replies) {
    release(slot, id).forEach((j, i) => {
      const r = replies(i);
      if (r.error) j.reject(r.error);
      else j.resolve(r.result);
    });
    pump();
  }

  /**
   * The worker of `slot` died (an uncaught error, or it exited). A worker runs its batches in the
   * order sent, so the first one in flight was running, or had just finished with its reply still
   * on the way (the error can overtake it): its jobs are retried one by one, each alone on a worker,
   * and only a job that crashes a worker while alone fails. The batches sent ahead go back to the
   * queue untouched.
   */
  function lost(slot, err) {
    slot.worker = null;
    const ids = [...slot.inflight.keys()];
    const retry = [];
    ids.forEach((id, n) => {
      const jobs = release(slot, id);
      for (const j of jobs) {
        if (n > 0) retry.push(j);
        else if (j.alone) j.reject(err);
        else retry.push(Object.assign(j, { alone: true }));
      }
    });
    queue.unshift(...retry);
    pump();
  }

  function spawn(slot) {
    const worker = new Worker(workerUrl);
    slot.worker = worker;
    worker.on('message', ({ id, results }) => settle(slot, id, (i) => {
      const r = results[i];
      return r.error ? { error: Object.assign(new Error(r.error.message), { code: r.error.code, changed: r.error.changed }) } : r;
    }));
    worker.on('error', (err) => {
      if (slot.worker === worker) lost(slot, err);
    });
    // An exit without an error (process.exit() inside an encoder) would otherwise leave its jobs unsettled.
    worker.on('exit', (code) => {
      if (slot.worker === worker && !closed) lost(slot, new Error(`compression worker exited (code ${code})`));
    });
    return worker;
  }

  /** A job's share of its slot's load (finite: a big job counts as just over aheadCost). */
  const counted = (job) => Math.min(job.cost, aheadCost + 1);

  /** Can `job` go to `slot` now? */
  function fits(slot, job) {
    if (slot.exclusive || slot.broken) return false;
    if (slot.inflight.size === 0) return true;
    return job.fn === undefined && !job.alone && job.cost < aheadCost && slot.cost + job.cost <= aheadCost;
  }

  function pump() {
    while (queue.length > 0 && !closed) {
      const job = queue[0];
      // the emptiest slot that takes it
      let slot = null;
      for (const s of slots) if (fits(s, job) && (slot === null || s.cost < slot.cost)) slot = s;
      if (slot === null) return;
      if (job.fn !== undefined) {
        queue.shift();
        runExclusive(slot, job);
        continue;
      }
      let worker = slot.worker;
      if (worker === null) {
        try {
          worker = spawn(slot);
        } catch (err) {
          // No thread to be had (thread or memory limits): with no worker running, fail the
          // queue; else the running ones take it.
          slot.broken = true;
          if (slots.some((s) => !s.broken && (s.worker !== null || s.exclusive))) continue;
          for (const j of queue.splice(0)) j.reject(err);
          return;
        }
      }
      // A busy slot takes more only up to aheadCost in all.
      const room = slot.inflight.size === 0 ? batchCost : Math.min(batchCost, aheadCost - slot.cost);
      const batch = [/** @type {Job} */ (queue.shift())];
      let cost = job.cost;
      while (!job.alone && queue.length > 0 && queue[0].fn === undefined && !queue[0].alone && cost + queue[0].cost <= room) {
        const next = /** @type {Job} */ (queue.shift());
        cost += next.cost;
        batch.push(next);
      }
      const id = nextId++;
      slot.inflight.set(id, batch);
      for (const j of batch) slot.cost += counted(j);
      for (const j of batch) onStart(j.task);
      worker.postMessage({ id, tasks: batch.map((j) => j.task) });
    }
  }

  function runExclusive(slot, job) {
    slot.exclusive = true;
    onStart(job.task);
    const fn = /** @type {() => Promise<any>} */ (job.fn);
    Promise.resolve().then(fn).then(job.resolve, job.reject).finally(() => {
      slot.exclusive = false;
      pump();
    });
  }

  function enqueue(job) {
    if (closed) return job.reject(new Error('pool is closed'));
    queue.push(job);
    pump();
  }

  return {
    /**
     * Run `task` in a worker.
     * @param {any} task
     * @param {number} [cost] estimated cost (jobs up to `batchCost` may share a message)
     * @returns {Promise<any>}
     */
    run(task, cost = Infinity) {
      return new Promise((resolve, reject) => enqueue({ task, cost, resolve, reject }));
    },
    /**
     * Run `fn` on this thread while it holds a whole slot (work that uses a core by other means,
     * such as streaming through the libuv pool).
     * @template T
     * @param {() => Promise<T>} fn
     * @param {any} [task] what `fn` does, for `onStart`
     * @returns {Promise<T>}
     */
    exclusive(fn, task) {
      return new Promise((resolve, reject) => enqueue({ fn, task, cost: Infinity, resolve, reject }));
    },
    /** Start every worker now (they load their modules while the caller prepares the work). */
    warm() {
      if (closed) return;
      try {
        for (const s of slots) if (s.worker === null && !s.broken) spawn(s);
      } catch {
        // Started on demand instead, where a failure is reported to the tasks.
      }
    },
    async close() {
      closed = true;
      for (const j of queue.splice(0)) j.reject(new Error('pool is closed'));
      await Promise.all(slots.map((s) => s.worker?.terminate()));
      for (const s of slots) {
        s.worker = null;
        for (const id of [...s.inflight.keys()]) settle(s, id, () => ({ error: new Error('pool is closed') }));
      }
    },
  };
}
