import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultGateLimits, PasswordChecksBusy, PasswordGate } from '../../src/crypto/password-gate.ts';

/** Work that finishes when the test says so. */
function held(): { work: () => Promise<string>; release: (v: string) => void; started: () => boolean } {
  let release: (v: string) => void = () => undefined;
  let started = false;
  const done = new Promise<string>((r) => (release = r));
  return {
    work: () => {
      started = true;
      return done;
    },
    release: (v) => release(v),
    started: () => started,
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('PasswordGate', () => {
  test('runs at most `concurrency` at once; the next waits and starts, in arrival order, when one finishes', async () => {
    const gate = new PasswordGate({ concurrency: 2, queue: 4, retryAfterSec: 1 });
    const jobs = [held(), held(), held(), held()];
    const results = jobs.map((j) => gate.run(j.work));
    await tick();
    assert.deepEqual(
      jobs.map((j) => j.started()),
      [true, true, false, false],
    );
    assert.deepEqual(gate.load, { active: 2, waiting: 2 });
    jobs[1]?.release('b');
    assert.equal(await results[1], 'b');
    await tick();
    assert.deepEqual(
      jobs.map((j) => j.started()),
      [true, true, true, false],
    );
    assert.deepEqual(gate.load, { active: 2, waiting: 1 });
    for (const [i, j] of jobs.entries()) j.release(String(i));
    await Promise.all(results);
    assert.deepEqual(gate.load, { active: 0, waiting: 0 });
  });

  test('refuses at once with PasswordChecksBusy (and its Retry-After) when the queue is full, without running the work', async () => {
    const gate = new PasswordGate({ concurrency: 1, queue: 1, retryAfterSec: 3 });
    const a = held();
    const b = held();
    const c = held();
    const ra = gate.run(a.work);
    const rb = gate.run(b.work);
    await assert.rejects(
      gate.run(c.work),
      (err: unknown) => err instanceof PasswordChecksBusy && err.retryAfterSec === 3,
    );
    assert.equal(c.started(), false);
    a.release('a');
    b.release('b');
    assert.deepEqual(await Promise.all([ra, rb]), ['a', 'b']);
  });

  test('a computation that fails gives its slot back', async () => {
    const gate = new PasswordGate({ concurrency: 1, queue: 0, retryAfterSec: 1 });
    await assert.rejects(
      gate.run(() => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await gate.run(async () => 'next'), 'next');
    assert.deepEqual(gate.load, { active: 0, waiting: 0 });
  });

  test('the default takes half of libuv pool (UV_THREADPOOL_SIZE, 4 when unset or not a number)', () => {
    assert.deepEqual(defaultGateLimits(undefined), { concurrency: 2, queue: 32, retryAfterSec: 1 });
    assert.equal(defaultGateLimits('nonsense').concurrency, 2);
    assert.equal(defaultGateLimits('1').concurrency, 1);
    assert.equal(defaultGateLimits('16').concurrency, 8);
  });
});
