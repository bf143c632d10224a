import { Worker } from 'node:worker_threads';

/**
 * A small pool of worker threads, created lazily on the first task and closed by the caller.
 * Tasks are handed out in the order run() is called, one per idle worker.
 * @param {number} size
 * @param {URL} workerUrl module that answers { id, task } with { id, result } or { id, error }
 */
export function createPool(size, workerUrl) {
  /** @type {{ worker: Worker, busy: boolean }[]} */
  const slots = [];
  const queue = [];
  const pending = new Map();
  let nextId = 0;
  let closed = false;

  function spawn() {
    const slot = { worker: new Worker(workerUrl), busy: false };
    slot.worker.on('message', ({ id, result, error }) => {
      const p = pending.get(id);
      pending.delete(id);
      slot.busy = false;
      if (error) p.reject(Object.assign(new Error(error.message), { code: error.code, changed: error.changed }));
      else p.resolve(result);
      pump();
    });
    slot.worker.on('error', (err) => {
      // A crashed worker fails its task; a new worker takes its place.
      for (const [id, p] of pending) {
        if (p.slot === slot) {
          pending.delete(id);
          p.reject(err);
        }
      }
      slots.splice(slots.indexOf(slot), 1);
      pump();
    });
    slots.push(slot);
    return slot;
  }

  function pump() {
    while (queue.length > 0) {
      let slot = slots.find((s) => !s.busy);
      if (!slot && slots.length < size) slot = spawn();
      if (!slot) return;
      const { task, resolve, reject } = queue.shift();
      const id = nextId++;
      slot.busy = true;
      pending.set(id, { resolve, reject, slot });
      slot.worker.postMessage({ id, task });
    }
  }

  return {
    /** @returns {Promise<any>} */
    run(task) {
      if (closed) return Promise.reject(new Error('pool is closed'));
      return new Promise((resolve, reject) => {
        queue.push({ task, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      await Promise.all(slots.map((s) => s.worker.terminate()));
      slots.length = 0;
    },
  };
}
