/** A password hash or check refused because the gate's queue is full: the request gets 503 with `Retry-After`. */
export class PasswordChecksBusy extends Error {
  constructor(readonly retryAfterSec: number) {
    super('The server is busy checking passwords; try again in a moment.');
  }
}

export interface GateLimits {
  /** Computations at once. */
  concurrency: number;
  /** Computations that may wait for a slot; one more is refused. */
  queue: number;
  /** What a refusal's `Retry-After` says, in whole seconds. */
  retryAfterSec: number;
}

/**
 * Slots for scrypt from libuv's pool, which file I/O shares: half of it (UV_THREADPOOL_SIZE,
 * libuv's default 4), so password checks can never hold every thread the store needs
 * (README, Security and durability).
 */
export function defaultGateLimits(uvThreadpoolSize: string | undefined): GateLimits {
  const pool = Number(uvThreadpoolSize);
  const threads = Number.isInteger(pool) && pool >= 1 ? Math.min(pool, 1024) : 4;
  const concurrency = Math.max(1, Math.floor(threads / 2));
  return { concurrency, queue: 16 * concurrency, retryAfterSec: 1 };
}

/**
 * A bounded semaphore for slow password computations: `concurrency` run at once, up to
 * `queue` more wait in arrival order, and beyond that `run` refuses at once rather than
 * letting waits pile up.
 */
export class PasswordGate {
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limits: GateLimits) {}

  /** Computations running, and waiting for a slot. */
  get load(): { active: number; waiting: number } {
    return { active: this.#active, waiting: this.#waiting.length };
  }

  /** Runs `work` in a slot; rejects with PasswordChecksBusy, without running it, when the queue is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#active < this.limits.concurrency) this.#active++;
    else if (this.#waiting.length >= this.limits.queue) throw new PasswordChecksBusy(this.limits.retryAfterSec);
    // A finishing computation hands its slot straight to the first waiter, so #active stays counted.
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next === undefined) this.#active--;
      else next();
    }
  }
}
