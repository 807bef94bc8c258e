// The bookkeeping of skills/sandbox-pool.ts, apart from threads so that it can be tested on its own:
// at most `slots` items run at once, the rest wait first in, first out, and no more than `maxWaiting`
// wait (a caller past that is refused at once instead of piling up behind a stuck skill).

export type Admission = 'run' | 'wait' | 'full';

export class RunQueue<T> {
  private readonly waiting: T[] = [];
  private runningCount = 0;

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
  ) {}

  get running(): number {
    return this.runningCount;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** 'run': the caller starts the item now (it holds a slot); 'wait': it is queued; 'full': refused. */
  offer(item: T): Admission {
    if (this.runningCount < this.slots) {
      this.runningCount++;
      return 'run';
    }
    if (this.waiting.length >= this.maxWaiting) return 'full';
    this.waiting.push(item);
    return 'wait';
  }

  /** A running item ended: the next one to start in its slot, or undefined when none waits (the slot is free). */
  done(): T | undefined {
    if (this.runningCount === 0) throw new Error('RunQueue.done() without a running item');
    const next = this.waiting.shift();
    if (next === undefined) this.runningCount--;
    return next;
  }

  /** Takes every waiting item out (closing); the running ones keep their slots until done(). */
  drain(): T[] {
    return this.waiting.splice(0);
  }
}
