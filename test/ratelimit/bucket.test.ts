import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter, take } from '../../src/ratelimit/bucket.ts';
import type { BucketState } from '../../src/ratelimit/bucket.ts';

interface Step {
  at: number;
  limit: number;
  /** Take this many times at once (default 1); only the last decision is checked. */
  times?: number;
  allowed: boolean;
  remaining?: number;
  retryAfterSec?: number;
}

const T0 = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

const cases: { name: string; steps: Step[] }[] = [
  { name: 'a new bucket starts full', steps: [{ at: T0, limit: 10, allowed: true, remaining: 9, retryAfterSec: 0 }] },
  {
    name: 'a bucket refuses once exhausted, retrying after one token period',
    steps: [
      { at: T0, limit: 3, allowed: true, remaining: 2 },
      { at: T0, limit: 3, allowed: true, remaining: 1 },
      { at: T0, limit: 3, allowed: true, remaining: 0 },
      { at: T0, limit: 3, allowed: false, remaining: 0, retryAfterSec: 20 },
    ],
  },
  {
    name: 'limit 60 refills one token per second',
    steps: [
      { at: T0, limit: 60, times: 60, allowed: true, remaining: 0 },
      { at: T0, limit: 60, allowed: false, retryAfterSec: 1 },
      { at: T0 + 1000, limit: 60, allowed: true, remaining: 0 },
      { at: T0 + 1000, limit: 60, allowed: false, retryAfterSec: 1 },
      { at: T0 + 4000, limit: 60, times: 3, allowed: true, remaining: 0 },
    ],
  },
  {
    name: 'a partial refill is not a token and rounds the wait up',
    steps: [
      { at: T0, limit: 6, times: 6, allowed: true, remaining: 0 },
      { at: T0 + 2500, limit: 6, allowed: false, remaining: 0, retryAfterSec: 8 },
      { at: T0 + 9999, limit: 6, allowed: false, retryAfterSec: 1 },
      { at: T0 + 10_000, limit: 6, allowed: true, remaining: 0 },
    ],
  },
  {
    name: 'retry-after rounds a fractional period up (limit 7: 8.57 s)',
    steps: [
      { at: T0, limit: 7, times: 7, allowed: true },
      { at: T0, limit: 7, allowed: false, retryAfterSec: 9 },
    ],
  },
  {
    name: 'remaining floors fractional tokens',
    steps: [
      { at: T0, limit: 10, times: 10, allowed: true, remaining: 0 },
      { at: T0 + 15_000, limit: 10, allowed: true, remaining: 1 }, // 2.5 tokens, minus one
    ],
  },
  {
    name: 'a full bucket does not grow past capacity while idle',
    steps: [
      { at: T0, limit: 5, allowed: true, remaining: 4 },
      { at: T0 + 24 * HOUR, limit: 5, allowed: true, remaining: 4 },
    ],
  },
  {
    name: 'a lowered limit clamps stored tokens to the new capacity',
    steps: [
      { at: T0, limit: 100, allowed: true, remaining: 99 },
      { at: T0, limit: 10, allowed: true, remaining: 9 },
    ],
  },
  {
    name: 'a raised limit keeps the tokens and refills at the new rate',
    steps: [
      { at: T0, limit: 2, times: 2, allowed: true, remaining: 0 },
      { at: T0, limit: 60, allowed: false, retryAfterSec: 1 },
      { at: T0 + 1000, limit: 60, allowed: true, remaining: 0 },
    ],
  },
  {
    name: 'a small backward clock step mints nothing and is not counted twice',
    steps: [
      { at: T0, limit: 60, times: 60, allowed: true, remaining: 0 },
      { at: T0 - 5000, limit: 60, allowed: false, retryAfterSec: 1 },
      { at: T0, limit: 60, allowed: false, retryAfterSec: 1 },
      { at: T0 + 1000, limit: 60, allowed: true, remaining: 0 },
    ],
  },
  {
    name: 'a large backward clock jump mints nothing and does not freeze the bucket',
    steps: [
      { at: T0, limit: 60, times: 60, allowed: true, remaining: 0 },
      { at: T0 - HOUR, limit: 60, allowed: false, retryAfterSec: 1 },
      { at: T0 - HOUR + 1000, limit: 60, allowed: true, remaining: 0 },
    ],
  },
  {
    name: 'limit 0 is unlimited',
    steps: [
      { at: T0, limit: 0, times: 1000, allowed: true, remaining: Number.POSITIVE_INFINITY, retryAfterSec: 0 },
      { at: T0, limit: 5, allowed: true, remaining: 4 }, // a later limit starts full
    ],
  },
];

describe('take', () => {
  for (const c of cases) {
    it(c.name, () => {
      let state: BucketState | undefined;
      for (const [i, step] of c.steps.entries()) {
        let d = take(state, step.limit, step.at);
        for (let n = 1; n < (step.times ?? 1); n++) d = take(d.state, step.limit, step.at);
        state = d.state;
        const where = `step ${i}`;
        assert.equal(d.allowed, step.allowed, where);
        if (step.remaining !== undefined) assert.equal(d.remaining, step.remaining, where);
        if (step.retryAfterSec !== undefined) assert.equal(d.retryAfterSec, step.retryAfterSec, where);
        assert.equal(d.allowed ? d.retryAfterSec : d.remaining, 0, where);
      }
    });
  }

  it('take refuses a negative, NaN or infinite limit with RangeError', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => take(undefined, bad, T0), RangeError);
    }
  });

  it('take counts time elapsed since the stored state (downtime refills)', () => {
    const d = take({ tokens: 0, updatedAt: T0 }, 60, T0 + 10 * HOUR);
    assert.deepEqual(d, {
      allowed: true,
      remaining: 59,
      retryAfterSec: 0,
      state: { tokens: 59, updatedAt: T0 + 10 * HOUR },
    });
  });

  it('take refills exactly limit tokens a minute despite float drift (limit 7, a take every ms)', () => {
    let state: BucketState | undefined;
    let allowed = 0;
    // Limit 7 refills a non-representable 7/60000 token per ms; one minute must yield 7 more.
    for (let t = 0; t <= 60_000; t += 1) {
      const d = take(state, 7, T0 + t);
      state = d.state;
      if (d.allowed) allowed += 1;
      assert.ok(d.state.tokens >= 0);
    }
    assert.equal(allowed, 7 + 7);
  });
});

describe('RateLimiter', () => {
  const clock = (start = T0): { now: () => number; set: (t: number) => void } => {
    let t = start;
    return { now: () => t, set: (v) => void (t = v) };
  };

  it('RateLimiter keeps one bucket per key', () => {
    const c = clock();
    const rl = new RateLimiter(c.now);
    assert.equal(rl.consume('token:a', 1).allowed, true);
    assert.equal(rl.consume('token:a', 1).allowed, false);
    assert.equal(rl.consume('token:b', 1).allowed, true);
    assert.equal(rl.consume('ip:1.2.3.4', 1).allowed, true);
    assert.equal(rl.size, 3);
  });

  it('RateLimiter.peek tells what consume would decide without spending', () => {
    const rl = new RateLimiter(clock().now);
    assert.equal(rl.peek('ip:x', 2).remaining, 1);
    assert.equal(rl.peek('ip:x', 2).remaining, 1);
    rl.consume('ip:x', 2);
    rl.consume('ip:x', 2);
    assert.equal(rl.peek('ip:x', 2).allowed, false);
    assert.equal(rl.size, 1);
  });

  it('RateLimiter stores nothing for an unlimited key and forgets a key that becomes unlimited', () => {
    const rl = new RateLimiter(clock().now);
    rl.consume('token:a', 5);
    assert.equal(rl.consume('token:a', 0).remaining, Number.POSITIVE_INFINITY);
    assert.equal(rl.size, 0);
    assert.deepEqual(Object.keys(rl.snapshot()), []);
  });

  it('snapshot and restore through JSON keep a depleted bucket depleted', () => {
    const c = clock();
    const a = new RateLimiter(c.now);
    for (let i = 0; i < 3; i++) a.consume('token:x', 3);
    const snap: unknown = JSON.parse(JSON.stringify(a.snapshot()));

    const b = new RateLimiter(c.now);
    b.restore(snap);
    assert.deepEqual(b.snapshot(), a.snapshot());
    const refused = b.consume('token:x', 3);
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterSec, 20);

    c.set(T0 + 60_000); // time while down counts
    assert.equal(b.consume('token:x', 3).remaining, 2);
  });

  it('snapshot keeps "__proto__" as an ordinary key', () => {
    const rl = new RateLimiter(clock().now);
    rl.consume('__proto__', 2);
    const copy = new RateLimiter(clock().now);
    copy.restore(JSON.parse(JSON.stringify(rl.snapshot())));
    assert.equal(copy.size, 1);
    assert.equal(copy.consume('__proto__', 2).remaining, 0);
  });

  it('restore ignores junk and keeps only well-formed buckets', () => {
    const rl = new RateLimiter(clock().now);
    for (const junk of [null, undefined, 42, 'x', [], [{ tokens: 1, updatedAt: T0, limit: 1 }]]) {
      rl.consume('token:old', 1);
      rl.restore(junk);
      assert.equal(rl.size, 0, `junk ${JSON.stringify(junk)} replaces what was there with nothing`);
    }
    rl.restore({
      good: { tokens: 0, updatedAt: T0, limit: 5 },
      nul: null,
      str: 'bucket',
      noTokens: { updatedAt: T0, limit: 5 },
      debt: { tokens: -300, updatedAt: T0, limit: 5 },
      deeperThanCharge: { tokens: -300.5, updatedAt: T0, limit: 5 },
      nanTime: { tokens: 1, updatedAt: 'yesterday', limit: 5 },
      infTime: { tokens: 1, updatedAt: 1e400, limit: 5 },
      zeroLimit: { tokens: 1, updatedAt: T0, limit: 0 },
      noLimit: { tokens: 1, updatedAt: T0 },
    });
    assert.deepEqual(Object.keys(rl.snapshot()), ['good', 'debt']);
    assert.equal(rl.consume('good', 5).allowed, false);
    assert.equal(rl.peek('debt', 5).retryAfterSec, 3_612, 'an hour of debt (charge) and a token');
  });

  it('prune drops only buckets that have refilled completely', () => {
    const c = clock();
    const rl = new RateLimiter(c.now);
    rl.consume('token:slow', 6); // 10 s per token
    c.set(T0 + 5_000);
    rl.consume('token:fast', 60); // 1 s per token
    rl.prune();
    assert.equal(rl.size, 2);

    c.set(T0 + 6_000);
    rl.prune();
    assert.deepEqual(Object.keys(rl.snapshot()), ['token:slow']);

    c.set(T0 + 10_000);
    rl.prune();
    assert.equal(rl.size, 0);
  });

  it('prune keeps a bucket whose stored time is in the future', () => {
    const c = clock();
    const rl = new RateLimiter(c.now);
    rl.consume('token:a', 2);
    c.set(T0 - 30_000);
    rl.prune();
    assert.equal(rl.size, 1);
  });
});
