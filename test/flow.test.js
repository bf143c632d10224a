import { singleFlight, retryWhileChanged, isChanged } from '../lib/util/flow.js';

/** A promise and the functions that settle it. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('singleFlight', () => {
  test('one run at a time; calls during a run share one more run after it', async () => {
    const runs = [];
    const f = singleFlight(() => {
      const d = deferred();
      runs.push(d);
      return d.promise;
    });
    const a = f.run();
    const b = f.run();
    const c = f.run();
    expect(runs).toHaveLength(1);
    expect(b).toBe(c);
    runs[0].resolve('first');
    expect(await a).toBe('first');
    await Promise.resolve();
    await Promise.resolve();
    expect(runs).toHaveLength(2);
    runs[1].resolve('second');
    expect(await b).toBe('second');
    expect(runs).toHaveLength(2);
  });

  test('a failed run rejects its callers only; the queued run still runs; idle never rejects', async () => {
    let n = 0;
    const f = singleFlight(async () => {
      n++;
      if (n === 1) throw new Error('boom');
      return n;
    });
    const a = f.run();
    const b = f.run();
    await expect(a).rejects.toThrow('boom');
    await expect(b).resolves.toBe(2);
    await expect(f.idle()).resolves.toBeUndefined();
    await expect(f.run()).resolves.toBe(3);
  });

  test('idle waits for the queued run too', async () => {
    const order = [];
    const gates = [deferred(), deferred()];
    let i = 0;
    const f = singleFlight(async () => {
      const k = i++;
      await gates[k].promise;
      order.push(k);
    });
    f.run();
    f.run();
    const idle = f.idle().then(() => order.push('idle'));
    gates[0].resolve();
    gates[1].resolve();
    await idle;
    expect(order).toEqual([0, 1, 'idle']);
  });
});

describe('retryWhileChanged', () => {
  const changed = () => Object.assign(new Error('changed'), { changed: true });

  test('runs again while the file changes, up to the number of attempts', async () => {
    const seen = [];
    const r = await retryWhileChanged(async (attempt) => {
      seen.push(attempt);
      if (attempt < 3) throw changed();
      return 'ok';
    }, 3);
    expect(r).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  test('the last changed error is thrown after the last attempt; other errors at once', async () => {
    let calls = 0;
    await expect(retryWhileChanged(async () => {
      calls++;
      throw changed();
    }, 2)).rejects.toThrow('changed');
    expect(calls).toBe(2);
    calls = 0;
    await expect(retryWhileChanged(async () => {
      calls++;
      throw new Error('EACCES');
    }, 3)).rejects.toThrow('EACCES');
    expect(calls).toBe(1);
  });

  test('isChanged: only an object with changed: true', () => {
    expect(isChanged(changed())).toBe(true);
    expect(isChanged(new Error('x'))).toBe(false);
    expect(isChanged(null)).toBe(false);
    expect(isChanged({ changed: 'yes' })).toBe(false);
  });
});
