/**
 * @typedef {{ task?: any, fn?: () => Promise<any>, cost: number, resolve: (v: any) => void, reject: (e: any) => void,
 *   alone?: boolean, started?: boolean }} Job
 *   fn: exclusive work run on this thread; alone: it was in a batch whose worker crashed, and now travels by
 *   itself; started: seen by onStart
 */

/** The jobs waiting for a slot, in the order they are handed out (the caller queues the most expensive first). */
export class JobQueue {
  /** @type {Job[]} */
  jobs = [];

  get size() {
    return this.jobs.length;
  }

  /** @returns {Job | undefined} */
  head() {
    return this.jobs[0];
  }

  /** @param {Job} job */
  push(job) {
    this.jobs.push(job);
  }

  /**
   * Put jobs back at the front, in their order (work taken back, or retried).
   * @param {Job[]} jobs
   */
  requeue(jobs) {
    this.jobs.unshift(...jobs);
  }

  /** @returns {Job} */
  shift() {
    return /** @type {Job} */ (this.jobs.shift());
  }

  /**
   * The head and the small jobs behind it that fit in `room` with it: one batch, one message. A job
   * that travels alone, or exclusive work, ends the batch.
   * @param {number} room
   */
  takeBatch(room) {
    const first = this.shift();
    const jobs = [first];
    let cost = first.cost;
    const fits = (/** @type {Job | undefined} */ j) =>
      j !== undefined && j.fn === undefined && !j.alone && cost + j.cost <= room;
    while (!first.alone && fits(this.jobs[0])) {
      const next = this.shift();
      cost += next.cost;
      jobs.push(next);
    }
    return jobs;
  }

  /**
   * Do the jobs queued fill a batch of `room` (a job that travels alone or exclusive work ends one)?
   * @param {number} room
   */
  holds(room) {
    let cost = 0;
    for (const j of this.jobs) {
      if (j.fn !== undefined || j.alone) return true;
      cost += j.cost;
      if (cost >= room) return true;
    }
    return false;
  }

  /** @param {unknown} err */
  rejectAll(err) {
    for (const j of this.jobs.splice(0)) j.reject(err);
  }
}
