import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Job } from '../../src/jobs/job.ts';
import { Scheduler, type SchedulerClock } from '../../src/jobs/scheduler.ts';

/** Lets every promise that can settle now settle (no time passes on either clock). */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A clock that moves only when told, firing the timers it passes in order. */
class FakeClock implements SchedulerClock {
  #t = 0;
  #timers = new Set<{ at: number; fn: () => void }>();
  readonly now = (): number => this.#t;
  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.#t + ms, fn };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }
  get pending(): number {
    return this.#timers.size;
  }
  async advance(ms: number): Promise<void> {
    const end = this.#t + ms;
    await settled();
    for (;;) {
      const next = [...this.#timers].filter((x) => x.at <= end).sort((x, y) => x.at - y.at)[0];
      if (next === undefined) break;
      this.#timers.delete(next);
      this.#t = next.at;
      next.fn();
      await settled();
    }
    this.#t = end;
    await settled();
  }
}

/** A job that records the clock at each round's start and runs `body`. */
function recording(
  name: string,
  everyMs: number,
  body: (stop: AbortSignal) => Promise<void> = async () => undefined,
  oncePerCluster = false,
) {
  const starts: number[] = [];
  const job: Job = {
    name,
    everyMs,
    oncePerCluster,
    run: async (now, stop) => {
      starts.push(now);
      await body(stop);
    },
  };
  return { job, starts };
}

/** A promise the test resolves when it chooses. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

function scheduler(clock: FakeClock, jobs: Job[], more: Partial<ConstructorParameters<typeof Scheduler>[0]> = {}) {
  const reports: [string, unknown][] = [];
  const s = new Scheduler({
    jobs,
    clock,
    turn: async () => true,
    report: (err, job) => reports.push([job, err]),
    ...more,
  });
  return { s, reports };
}

describe('Scheduler', () => {
  test('runs each job at start, then each at its own period on the clock', async () => {
    const clock = new FakeClock();
    const fast = recording('fast', 100);
    const slow = recording('slow', 250);
    const { s } = scheduler(clock, [fast.job, slow.job]);
    s.start();
    await clock.advance(99);
    assert.deepEqual(fast.starts, [0]);
    await clock.advance(1);
    assert.deepEqual(fast.starts, [0, 100]);
    await clock.advance(400);
    assert.deepEqual(fast.starts, [0, 100, 200, 300, 400, 500]);
    assert.deepEqual(slow.starts, [0, 250, 500]);
    await s.stop();
  });

  test('a job done once across the servers runs only when it has the turn, asked with its name and period', async () => {
    const clock = new FakeClock();
    const asked: [string, number][] = [];
    let ours = false;
    const shared = recording('expiry sweep', 100, undefined, true);
    const local = recording('view counts', 100);
    const { s } = scheduler(clock, [shared.job, local.job], {
      turn: async (job, everyMs) => {
        asked.push([job, everyMs]);
        return ours;
      },
    });
    s.start();
    await clock.advance(100);
    ours = true;
    await clock.advance(100);
    assert.deepEqual(shared.starts, [200]);
    assert.deepEqual(local.starts, [0, 100, 200]);
    assert.deepEqual(asked, [
      ['expiry sweep', 100],
      ['expiry sweep', 100],
      ['expiry sweep', 100],
    ]);
    await s.stop();
  });

  test('a failing round, or a failing turn, is reported and stops neither that job nor the others', async () => {
    const clock = new FakeClock();
    const failing = recording('failing', 100, async () => {
      throw new Error('disk full');
    });
    const turnless = recording('turnless', 100, undefined, true);
    const fine = recording('fine', 100);
    const { s, reports } = scheduler(clock, [failing.job, turnless.job, fine.job], {
      turn: async () => {
        throw new Error('no database');
      },
    });
    s.start();
    await clock.advance(200);
    assert.deepEqual(failing.starts, [0, 100, 200]);
    assert.deepEqual(fine.starts, [0, 100, 200]);
    assert.deepEqual(turnless.starts, []);
    assert.deepEqual(reports.map(([job, err]) => `${job}: ${(err as Error).message}`).sort(), [
      ...Array(3).fill('failing: disk full'),
      ...Array(3).fill('turnless: no database'),
    ]);
    await s.stop();
  });

  test('a job never overlaps itself: a slow round holds its next one back, and no other job', async () => {
    const clock = new FakeClock();
    const g = gate();
    let running = 0;
    let most = 0;
    const slow = recording('slow', 100, async () => {
      most = Math.max(most, ++running);
      await g.wait;
      running--;
    });
    const other = recording('other', 100);
    const { s } = scheduler(clock, [slow.job, other.job]);
    s.start();
    await clock.advance(350);
    assert.deepEqual(slow.starts, [0], 'rounds due while one runs are not begun');
    assert.deepEqual(other.starts, [0, 100, 200, 300]);
    // A round asked for now waits for the one in progress, then begins.
    const now = s.runAll();
    await settled();
    assert.deepEqual(slow.starts, [0]);
    g.open();
    await now;
    assert.deepEqual(slow.starts, [0, 350]);
    assert.equal(most, 1);
    assert.deepEqual(other.starts, [0, 100, 200, 300, 350]);
    await clock.advance(100);
    assert.deepEqual(slow.starts, [0, 350, 450], 'and the period goes on from the last round');
    await s.stop();
  });

  test('stop tells a round in progress to stop, waits for it, and begins no more', async () => {
    const clock = new FakeClock();
    let slices = 0;
    const g = gate();
    const sweep = recording('sweep', 100, async (stop) => {
      // Bounded, so that a stop that is not told ends the test instead of looping.
      while (!stop.aborted && slices < 3) {
        slices++;
        await g.wait;
      }
    });
    const { s } = scheduler(clock, [sweep.job]);
    s.start();
    await settled();
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await settled();
    assert.equal(stopped, false, 'the round in progress is waited for');
    g.open();
    await stopping;
    assert.equal(slices, 1, 'it ended at its next check of the signal');
    await clock.advance(1_000);
    await s.runAll();
    assert.deepEqual(sweep.starts, [0]);
    assert.equal(clock.pending, 0, 'no timer is left');
  });
});
