import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
// The guard's timeouts are real timers (src/pg/guard.ts takes no clock): time is the behaviour
// here, and each sleep stands for a database call, or work between calls, of a known length.
import { setTimeout as sleep } from 'node:timers/promises';
import { DbGuard, isUnavailable } from '../../src/pg/guard.ts';
import { currentScope, type InFlight } from '../../src/pg/scope.ts';
import { OutcomeUnknown, StorageUnavailable } from '../../src/storage/errors.ts';

const never = (): Promise<never> => new Promise(() => undefined);

describe('DbGuard', () => {
  test('a call slower than the timeout is refused as storage unavailable, and the guard says the database is not answering', async () => {
    const guard = new DbGuard(50, 10);
    const started = performance.now();
    await assert.rejects(
      guard.run(never),
      (err) => err instanceof StorageUnavailable && /within 50 ms/.test(err.message),
    );
    assert.ok(performance.now() - started < 1_000);
    assert.equal(guard.answering, false);
    assert.equal(await guard.run(async () => 7), 7);
    assert.equal(guard.answering, true);
  });

  test('calls past the bound are refused at once instead of queueing', async () => {
    const guard = new DbGuard(10_000, 2);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = guard.run(() => held);
    const b = guard.run(() => held);
    await assert.rejects(
      guard.run(async () => 1),
      /every database connection is busy/,
    );
    release();
    await Promise.all([a, b]);
    assert.equal(await guard.run(async () => 1), 1, 'room again once the calls ended');
  });

  test('a lost connection becomes storage unavailable; a query error stays what it is', async () => {
    const guard = new DbGuard(1_000, 10);
    const lost = Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' });
    await assert.rejects(
      guard.run(() => Promise.reject(lost)),
      (err) => err instanceof StorageUnavailable,
    );
    const shutdown = Object.assign(new Error('terminating connection'), { code: '57P01' });
    assert.equal(isUnavailable(shutdown), true);
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    await assert.rejects(
      guard.run(() => Promise.reject(unique)),
      (err) => err === unique,
    );
    assert.equal(isUnavailable(unique), false);
  });

  test('wrap guards the methods that return promises and leaves the rest as they are', async () => {
    const guard = new DbGuard(50, 10);
    class Store {
      #n = 1;
      get n(): number {
        return this.#n;
      }
      sync(): number {
        return this.#n + 1;
      }
      async slow(): Promise<number> {
        await never();
        return this.#n;
      }
      later(): Promise<number> {
        return Promise.resolve(this.#n + 2);
      }
    }
    const store = guard.wrap(new Store());
    assert.equal(store.n, 1, 'getters reach private fields through the wrapper');
    assert.equal(store.sync(), 2);
    assert.equal(await store.later(), 3);
    await assert.rejects(store.slow(), (err) => err instanceof StorageUnavailable);
  });

  test('a promise that many callers of a wrapped method share counts once against the bound, with one timeout', async () => {
    const guard = new DbGuard(60, 2);
    let release: (v: number) => void = () => undefined;
    let shared = new Promise<number>((resolve) => {
      release = resolve;
    });
    class Accounts {
      fresh(): Promise<number> {
        return shared;
      }
    }
    const accounts = guard.wrap(new Accounts());
    assert.equal(accounts.fresh, accounts.fresh, 'a method is wrapped once');
    const waiting = Array.from({ length: 5 }, () => accounts.fresh());
    assert.equal(await guard.run(async () => 7), 7, 'five callers of one promise hold one place of two');
    release(1);
    assert.deepEqual(await Promise.all(waiting), [1, 1, 1, 1, 1]);
    // A promise that never settles: every caller is refused at the one timeout.
    shared = never();
    const started = Date.now();
    const stalled = [accounts.fresh(), accounts.fresh()];
    const third = guard.run(async () => 8);
    assert.equal(await third, 8, 'the stalled promise holds one place');
    for (const call of stalled) await assert.rejects(call, (err) => err instanceof StorageUnavailable);
    assert.ok(Date.now() - started < 1_000);
    assert.equal(await guard.run(async () => 9), 9, 'its place is free again after the timeout');
    // A promise kept for long that answered after its callers' timeout: later callers get its answer.
    shared = new Promise((resolve) => setTimeout(() => resolve(2), 100));
    await assert.rejects(accounts.fresh(), (err) => err instanceof StorageUnavailable);
    await shared;
    assert.equal(await accounts.fresh(), 2);
  });

  test('wrap guards each step of an async generator, and a consumer that stops early ends it', {
    timeout: 5_000,
  }, async () => {
    const guard = new DbGuard(50, 10);
    let ended = 0;
    class Lists {
      async *batches(stallAt: number): AsyncGenerator<number[]> {
        try {
          for (let i = 0; ; i++) {
            if (i === stallAt) await never();
            yield [i];
          }
        } finally {
          ended++;
        }
      }
    }
    const lists = guard.wrap(new Lists());
    const seen: number[] = [];
    for await (const b of lists.batches(99)) {
      seen.push(...b);
      if (seen.length === 3) break;
    }
    assert.deepEqual(seen, [0, 1, 2]);
    assert.equal(ended, 1, 'stopping early ended the generator');
    const stalled: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const b of lists.batches(2)) stalled.push(...b);
      })(),
      (err) => err instanceof StorageUnavailable && /did not answer within 50 ms/.test(err.message),
    );
    assert.deepEqual(stalled, [0, 1], 'the steps before the stall came through');
  });

  test('the calls of one request share one timeout: a second call gets what the first left of it, not a whole one, and time between calls is not counted', async () => {
    const guard = new DbGuard(300, 10);
    const started = performance.now();
    await assert.rejects(
      guard.request(async () => {
        assert.equal(await guard.run(() => sleep(200).then(() => 1)), 1);
        return guard.run(never);
      }),
      (err) => err instanceof StorageUnavailable && !(err instanceof OutcomeUnknown),
    );
    const took = performance.now() - started;
    assert.ok(took < 450, `refused after ${Math.round(took)} ms; the request's time was 300 ms`);
    // Work between the calls (a body read, a password hash) is not the database's time.
    assert.equal(
      await guard.request(async () => {
        await guard.run(() => sleep(150));
        await sleep(300);
        return guard.run(() => sleep(100).then(() => 3));
      }),
      3,
    );
    // A call after the deadline is refused before it starts.
    let ran = false;
    await assert.rejects(
      guard.request(async () => {
        await guard.run(() => sleep(320));
        ran = true;
      }),
      StorageUnavailable,
    );
    assert.equal(ran, false);
  });

  test('a change sent when the time runs out is waited for: made, the call answers; unheard of, the refusal says outcome_unknown', async () => {
    const guard = new DbGuard(50, 10, 100);
    /** A call that has a write on its way, as pg/scoped-sql.ts records one, settling after `ms` (never when null). */
    const writing = (ms: number | null) => () => {
      const scope = currentScope();
      assert.ok(scope !== undefined);
      let cancelled = 0;
      const entry: InFlight = {
        cancel: () => void cancelled++,
        get mayHaveWritten() {
          return scope.live.has(entry);
        },
      };
      scope.live.add(entry);
      return ms === null
        ? never()
        : sleep(ms).then(() => {
            scope.live.delete(entry);
            scope.committed = true;
            return cancelled;
          });
    };
    assert.equal(await guard.run(writing(80)), 1, 'made within the wait: the answer is the change, after one cancel');
    const t0 = performance.now();
    await assert.rejects(
      guard.run(writing(null)),
      (err) => err instanceof OutcomeUnknown && /not known/.test(err.message),
    );
    assert.ok(performance.now() - t0 < 1_000);
    // Nothing sent that could have changed anything: a plain refusal, at once.
    await assert.rejects(
      guard.run(never),
      (err) => err instanceof StorageUnavailable && !(err instanceof OutcomeUnknown),
    );
  });

  test('the breaker: tripped, calls are refused at once without starting; reset, they go through; the check itself passes it, bounded by the timeout', async () => {
    const guard = new DbGuard(100, 10);
    guard.trip('connect ECONNREFUSED');
    assert.equal(guard.open, true);
    let ran = false;
    const refused = guard.run(async () => {
      ran = true;
    });
    // At once: refused before the event loop turns even once, so no timer could have been waited for.
    const turned = new Promise<'a turn'>((resolve) => setImmediate(() => resolve('a turn')));
    assert.notEqual(await Promise.race([refused.catch(() => 'refused'), turned]), 'a turn', 'refused at once');
    await assert.rejects(
      refused,
      (err) => err instanceof StorageUnavailable && /does not answer \(connect ECONNREFUSED\)/.test(err.message),
    );
    assert.equal(ran, false, 'the call never started');
    assert.equal(await guard.check(async () => 1), 1, 'the probe goes past the open breaker');
    await assert.rejects(guard.check(never), /within 100 ms/);
    guard.reset();
    assert.equal(guard.open, false);
    assert.equal(await guard.run(async () => 2), 2);
  });
});
