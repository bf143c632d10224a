import { createPool } from '../../lib/compress/pool/pool.js';

const WORKER = new URL('../helpers/echo-worker.js', import.meta.url);

/** Run `fn` with a pool that is closed afterwards, whatever happens. */
async function withPool(size, limits, fn, url = WORKER) {
  const pool = createPool(size, url, limits);
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
}

describe('createPool', () => {
  test('small tasks share a message up to batchCost; a task over it travels alone', async () => {
    await withPool(1, { batchCost: 10, aheadCost: 40 }, async (pool) => {
      const runs = [pool.run({ n: 0 }, 100), ...[1, 2, 3, 4, 5, 6].map((n) => pool.run({ n }, 4))];
      const results = await Promise.all(runs);
      expect(results.map((r) => r.n)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(results[0].batch).toBe(1);
      // 4 + 4 fit in 10, a third does not: batches of 2, 2, 2
      expect(results.slice(1).map((r) => r.batch)).toEqual([2, 2, 2, 2, 2, 2]);
    });
  });

  test('small tasks queued one by one to a busy worker share a message', async () => {
    const gate = new Int32Array(new SharedArrayBuffer(4));
    await withPool(1, { batchCost: 10, aheadCost: 40 }, async (pool) => {
      const first = pool.run({ n: 0, gate }, 4); // keeps the worker busy
      const runs = [];
      for (const n of [1, 2, 3, 4]) {
        runs.push(pool.run({ n }, 2)); // as files admitted one after another: a turn of microtasks apart
        await Promise.resolve();
      }
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      const results = await Promise.all([first, ...runs]);
      expect(results.map((r) => r.n)).toEqual([0, 1, 2, 3, 4]);
      expect(results.slice(1).map((r) => r.batch)).toEqual([4, 4, 4, 4]);
    });
  });

  test('limit(n) gives work to n workers only (the caller takes a share itself), then to all again', async () => {
    await withPool(2, { batchCost: 1, aheadCost: 1 }, async (pool) => {
      pool.limit(1);
      const one = await Promise.all([0, 1, 2].map((n) => pool.run({ n, ms: 30 }, 1)));
      expect(new Set(one.map((r) => r.thread)).size).toBe(1);
      pool.limit(Infinity);
      const both = await Promise.all([3, 4].map((n) => pool.run({ n, ms: 200 }, 1)));
      expect(new Set(both.map((r) => r.thread)).size).toBe(2);
    });
  });

  test('an error fails its own task only; the other tasks of its batch resolve', async () => {
    await withPool(1, { batchCost: 100, aheadCost: 100 }, async (pool) => {
      const settled = await Promise.allSettled([1, 2, 3].map((n) => pool.run({ n, fail: n === 2 }, 1)));
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(/** @type {any} */ (settled[1]).reason).toMatchObject({ message: 'task 2 failed', code: 'E_TASK' });
    });
  });

  test('expensive tasks go only to idle workers, never queued behind another one', async () => {
    await withPool(2, { batchCost: 10, aheadCost: 20 }, async (pool) => {
      // task 0 keeps one worker busy; 1, 2 and 3 must all run on the other one, in turn
      const results = await Promise.all([600, 10, 10, 10].map((ms, n) => pool.run({ n, ms }, 1000)));
      for (const r of results) expect(r.batch).toBe(1);
      for (const r of results.slice(1)) expect(r.thread).not.toBe(results[0].thread);
    });
  });

  test('work sent ahead to a busy worker is taken back by a worker that falls idle', async () => {
    const gate = () => new Int32Array(new SharedArrayBuffer(4));
    const open = (g) => {
      Atomics.store(g, 0, 1);
      Atomics.notify(g, 0);
    };
    const [longJob, shortJob] = [gate(), gate()];
    const started = [];
    await withPool(2, { batchCost: 1, aheadCost: 10, onStart: (t) => started.push(t.n) }, async (pool) => {
      const a = pool.run({ n: 'a', gate: longJob }, 1); // the long job: held until the end
      const c = pool.run({ n: 'c', gate: shortJob }, 1); // on the other worker
      const b = pool.run({ n: 'b' }, 1); // both busy: sent ahead to a's worker (the first one)
      expect(started).toEqual(['a', 'c', 'b']);
      open(shortJob);
      const rc = await c;
      // c's worker is idle now, b still waits behind a: it must have been taken back already.
      open(longJob);
      const [ra, rb] = await Promise.all([a, b]);
      expect(ra.thread).not.toBe(rc.thread);
      expect(rb.thread).toBe(rc.thread);
      expect(started).toEqual(['a', 'c', 'b']); // reported once, although sent twice
    });
  });

  test('exclusive work holds a whole slot: with one slot, workers wait for it', async () => {
    const started = [];
    await withPool(1, { batchCost: 10, aheadCost: 20, onStart: (t) => started.push(t ?? 'exclusive') }, async (pool) => {
      const order = [];
      let release;
      const gate = new Promise((r) => (release = r));
      const ex = pool.exclusive(async () => {
        await gate;
        order.push('exclusive');
        return 'done';
      });
      const task = pool.run({ n: 1 }, 1).then(() => order.push('task'));
      // the pool hands out work as it is submitted: the task would have started by now if it could
      expect(started).toEqual(['exclusive']);
      release();
      expect(await ex).toBe('done');
      await task;
      expect(order).toEqual(['exclusive', 'task']);
    });
  });

  test('a crashed worker fails the tasks it held, and a new worker takes the next ones', async () => {
    await withPool(1, { batchCost: 1, aheadCost: 1 }, async (pool) => {
      await expect(pool.run({ n: 1, crash: true }, 5)).rejects.toThrow('worker crashed');
      await expect(pool.run({ n: 2 }, 5)).resolves.toMatchObject({ n: 2 });
    });
  });

  test('a crash fails only the task that caused it: the rest of its batch and the batches sent ahead are retried', async () => {
    await withPool(1, { batchCost: 10, aheadCost: 40 }, async (pool) => {
      const settled = await Promise.allSettled([0, 1, 2, 3, 4, 5, 6].map((n) => pool.run({ n, crash: n === 2 }, 3)));
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect(/** @type {any} */ (settled[2]).reason.message).toBe('worker crashed');
    });
  });

  test('a worker that exits without an error fails its task instead of hanging', async () => {
    await withPool(1, { batchCost: 10, aheadCost: 20 }, async (pool) => {
      const settled = await Promise.allSettled([1, 2, 3].map((n) => pool.run({ n, exit: n === 1 }, 3)));
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
      expect(/** @type {any} */ (settled[0]).reason.message).toMatch(/exited \(code 3\)/);
    });
  });

  test('a worker module that cannot load fails every task, without hanging', async () => {
    await withPool(2, { batchCost: 10, aheadCost: 20 }, async (pool) => {
      pool.warm();
      const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => pool.run({ n }, 3)));
      expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    }, new URL('./helpers/no-such-worker.js', import.meta.url));
  });

  test('close() rejects queued tasks and later ones', async () => {
    const pool = createPool(1, WORKER);
    const first = pool.run({ n: 1, ms: 100 });
    const queued = expect(pool.run({ n: 2 })).rejects.toThrow('pool is closed');
    const inflight = expect(first).rejects.toThrow('pool is closed');
    await pool.close();
    await queued;
    await inflight;
    await expect(pool.run({ n: 3 })).rejects.toThrow('pool is closed');
  });
});
