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
 * @param {{ batchCost?: number, aheadCost?: number }} [limits] in the caller's cost units
 */
export function createPool(size, workerUrl, limits = {}) {
  const batchCost = limits.batchCost ?? 0;
  const aheadCost = limits.aheadCost ?? 0;
  /** @typedef {{ task?: any, fn?: () => Promise<any>, cost: number, resolve: (v: any) => void, reject: (e: any) => void }} Job */
  /** @type {{ worker: Worker | null, inflight: Map<number, Job[]>, cost: number, exclusive: boolean }[]} */
  const slots = Array.from({ length: size }, () => ({ worker: null, inflight: new Map(), cost: 0, exclusive: false }));
  /** @type {Job[]} */
  const queue = [];
  let nextId = 0;
  let closed = false;

  function settle(slot, id, replies) {
    const jobs = slot.inflight.get(id);
    if (!jobs) return;
    slot.inflight.delete(id);
    for (const j of jobs) slot.cost -= counted(j);
    jobs.forEach((j, i) => {
      const r = replies(i);
      if (r.error) j.reject(r.error);
      else j.resolve(r.result);
    });
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
      // A crashed worker fails the jobs it holds; a new worker takes its place on the next job.
      slot.worker = null;
      for (const id of [...slot.inflight.keys()]) settle(slot, id, () => ({ error: err }));
    });
    return worker;
  }

  /** A job's share of its slot's load (finite, so that sums stay exact). */
  const counted = (job) => Math.min(job.cost, aheadCost + 1);

  /** Can `job` go to `slot` now? */
  function fits(slot, job) {
    if (slot.exclusive) return false;
    if (slot.inflight.size === 0) return true;
    return job.fn === undefined && job.cost < aheadCost && slot.cost + job.cost <= aheadCost;
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
      const batch = [queue.shift()];
      let cost = job.cost;
      while (queue.length > 0 && queue[0].fn === undefined && cost + queue[0].cost <= batchCost) {
        const next = /** @type {Job} */ (queue.shift());
        cost += next.cost;
        batch.push(next);
      }
      const id = nextId++;
      slot.inflight.set(id, batch);
      for (const j of batch) slot.cost += counted(j);
      (slot.worker ?? spawn(slot)).postMessage({ id, tasks: batch.map((j) => j.task) });
    }
  }

  function runExclusive(slot, job) {
    slot.exclusive = true;
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
     * @returns {Promise<T>}
     */
    exclusive(fn) {
      return new Promise((resolve, reject) => enqueue({ fn, cost: Infinity, resolve, reject }));
    },
    /** Start every worker now (they load their modules while the caller prepares the work). */
    warm() {
      if (closed) return;
      for (const s of slots) if (s.worker === null) spawn(s);
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
