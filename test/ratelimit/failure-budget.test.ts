import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RateLimiter } from '../../src/ratelimit/bucket.ts';
import { FailureBudget, type Budget } from '../../src/ratelimit/failure-budget.ts';

const T0 = Date.UTC(2026, 0, 1);

function setup(): { limiter: RateLimiter; budget: FailureBudget; advance: (ms: number) => void } {
  let now = T0;
  const limiter = new RateLimiter(() => now);
  return { limiter, budget: new FailureBudget(limiter), advance: (ms) => (now += ms) };
}

const deferred = <T>(): { promise: Promise<T>; resolve: (v: T) => void } => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

const ONE: Budget[] = [{ key: 'k', limitPerMinute: 3 }];

describe('FailureBudget', () => {
  test('failures spend the budget, successes spend nothing', async () => {
    const { budget } = setup();
    for (let i = 0; i < 10; i++)
      assert.deepEqual(
        await budget.attempt(
          ONE,
          async () => true,
          (ok) => !ok,
        ),
        { value: true },
      );
    for (let i = 0; i < 3; i++)
      assert.deepEqual(
        await budget.attempt(
          ONE,
          async () => false,
          (ok) => !ok,
        ),
        { value: false },
      );
    const refused = await budget.attempt(
      ONE,
      async () => assert.fail('no check once the budget is spent'),
      () => true,
    );
    assert.ok('refused' in refused);
    assert.equal(refused.refused.limitPerMinute, 3);
    assert.ok(refused.refused.retryAfterSec >= 1);
  });

  test('concurrent attempts never run more checks than the budget has left', async () => {
    const { budget } = setup();
    const gate = deferred<boolean>();
    let checks = 0;
    const attempts = Array.from({ length: 12 }, () =>
      budget.attempt(
        ONE,
        () => (checks++, gate.promise),
        (ok) => !ok,
      ),
    );
    gate.resolve(false);
    const outcomes = await Promise.all(attempts);
    assert.equal(checks, 3);
    assert.equal(outcomes.filter((o) => 'refused' in o).length, 9);
  });

  test('a success in flight holds its charge until it settles, then gives it back', async () => {
    const { budget } = setup();
    const gate = deferred<boolean>();
    const inFlight = [0, 1, 2].map(() =>
      budget.attempt(
        ONE,
        () => gate.promise,
        (ok) => !ok,
      ),
    );
    assert.ok(
      'refused' in
        (await budget.attempt(
          ONE,
          async () => true,
          () => false,
        )),
      'all three tokens are held',
    );
    gate.resolve(true);
    await Promise.all(inFlight);
    for (let i = 0; i < 3; i++)
      assert.ok(
        'value' in
          (await budget.attempt(
            ONE,
            async () => false,
            () => true,
          )),
      );
  });

  test('charges every budget or none: a refusal by the second gives the first its token back', async () => {
    const { budget, limiter } = setup();
    const two: Budget[] = [
      { key: 'ip', limitPerMinute: 5 },
      { key: 'account', limitPerMinute: 1 },
    ];
    assert.ok(
      'value' in
        (await budget.attempt(
          two,
          async () => false,
          () => true,
        )),
    );
    assert.ok(
      'refused' in
        (await budget.attempt(
          two,
          async () => false,
          () => true,
        )),
    );
    assert.equal(limiter.peek('ip', 5).remaining, 3, 'the ip budget paid once, for the one check');
  });

  test('a fault in the check is not a failure: the charge goes back and the error comes out', async () => {
    const { budget } = setup();
    for (let i = 0; i < 5; i++)
      await assert.rejects(
        budget.attempt(
          ONE,
          async () => Promise.reject(new Error('disk')),
          () => true,
        ),
        /disk/,
      );
    assert.throws(
      () =>
        budget.attemptNow(
          ONE,
          () => {
            throw new Error('sync');
          },
          () => true,
        ),
      /sync/,
    );
    assert.ok(
      'value' in
        (await budget.attempt(
          ONE,
          async () => false,
          () => true,
        )),
    );
  });

  test('attemptNow answers at once, by the same rule', () => {
    const { budget, advance } = setup();
    for (let i = 0; i < 3; i++)
      assert.deepEqual(
        budget.attemptNow(
          ONE,
          () => null,
          (v) => v === null,
        ),
        { value: null },
      );
    assert.ok(
      'refused' in
        budget.attemptNow(
          ONE,
          () => 'right',
          () => false,
        ),
      'a right answer too, once spent',
    );
    advance(20_000);
    assert.deepEqual(
      budget.attemptNow(
        ONE,
        () => 'right',
        () => false,
      ),
      { value: 'right' },
      'refilled: one token a 20 s',
    );
  });

  test('attemptThenCharge: concurrent successes hold nothing; a burst of failures is paid back before the next attempt', async () => {
    const { budget, limiter, advance } = setup();
    const gate = deferred<boolean>();
    const rights = Array.from({ length: 10 }, () =>
      budget.attemptThenCharge(
        ONE,
        () => gate.promise,
        (ok) => !ok,
      ),
    );
    gate.resolve(true);
    assert.ok(
      (await Promise.all(rights)).every((o) => 'value' in o),
      'ten at once, with a budget of three',
    );
    assert.equal(limiter.size, 0, 'successes touch no bucket');

    const wrong = deferred<boolean>();
    const burst = Array.from({ length: 9 }, () =>
      budget.attemptThenCharge(
        ONE,
        () => wrong.promise,
        (ok) => !ok,
      ),
    );
    wrong.resolve(false);
    assert.ok(
      (await Promise.all(burst)).every((o) => 'value' in o),
      'all nine were looked at before any was charged',
    );
    // 3 - 9 = -6 tokens: seven tokens (140 s at 3 a minute) before one attempt is allowed again.
    const refused = await budget.attemptThenCharge(
      ONE,
      async () => assert.fail('no check while in debt'),
      () => true,
    );
    assert.ok('refused' in refused);
    assert.equal(refused.refused.retryAfterSec, 140);
    advance(139_000);
    assert.ok(
      'refused' in
        (await budget.attemptThenCharge(
          ONE,
          async () => true,
          () => false,
        )),
    );
    advance(1_000);
    assert.deepEqual(
      await budget.attemptThenCharge(
        ONE,
        async () => true,
        () => false,
      ),
      { value: true },
    );
    await assert.rejects(
      budget.attemptThenCharge(
        ONE,
        async () => Promise.reject(new Error('disk')),
        () => true,
      ),
      /disk/,
    );
    assert.equal(limiter.peek('k', 3).remaining, 0, 'a fault charged nothing');
  });

  test('a debt is bounded by an hour of refill, and survives a snapshot', () => {
    let now = T0;
    const limiter = new RateLimiter(() => now);
    for (let i = 0; i < 1000; i++) limiter.charge('k', 3);
    assert.equal(limiter.peek('k', 3).retryAfterSec, 3_620, '3 + 180 tokens: 181 tokens at 3 a minute');
    const copy = new RateLimiter(() => now);
    copy.restore(JSON.parse(JSON.stringify(limiter.snapshot())));
    assert.equal(copy.peek('k', 3).retryAfterSec, 3_620);
    copy.restore({ k: { tokens: -181, updatedAt: now, limit: 3 } });
    assert.equal(copy.size, 0, 'deeper than charge can go: junk');
    now += 3_620_000;
    assert.equal(limiter.peek('k', 3).allowed, true);
  });

  test('a limit of 0 is no limit', async () => {
    const { budget } = setup();
    const none: Budget[] = [{ key: 'k', limitPerMinute: 0 }];
    for (let i = 0; i < 100; i++)
      assert.ok(
        'value' in
          (await budget.attempt(
            none,
            async () => false,
            () => true,
          )),
      );
  });
});

describe('RateLimiter.refund', () => {
  test('gives back one token, never past the capacity, and drops a bucket that is full again', () => {
    const now = T0;
    const limiter = new RateLimiter(() => now);
    limiter.consume('k', 2);
    limiter.consume('k', 2);
    assert.equal(limiter.peek('k', 2).allowed, false);
    limiter.refund('k', 2);
    assert.equal(limiter.peek('k', 2).remaining, 0, 'one token back');
    limiter.refund('k', 2);
    assert.equal(limiter.size, 0, 'full again: nothing to remember');
    limiter.refund('k', 2);
    assert.equal(limiter.size, 0, 'a refund never creates a bucket');
    assert.equal(limiter.peek('k', 2).remaining, 1);
  });
});
