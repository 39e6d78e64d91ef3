/**
 * Bytes the server will hold for request bodies it reads before it knows who is asking
 * (README, Security and durability): an API request whose token may be in its body, a web
 * form without a session. Each such read takes its bytes from here as they arrive and gives
 * them back once parsed; a read that would go past the budget is refused with 503, so
 * unauthenticated uploads cannot grow the heap without bound, however many arrive at once.
 */
export class BodyBudget {
  #held = 0;

  constructor(readonly limit: number) {}

  /** Bytes taken now, by all reads together. */
  get held(): number {
    return this.#held;
  }

  /** Whether `bytes` more would fit now (a declared Content-Length, before anything is read). */
  fits(bytes: number): boolean {
    return this.#held + bytes <= this.limit;
  }

  /** Takes `bytes` if they fit; false (and nothing taken) when they do not. */
  take(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.#held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#held = Math.max(0, this.#held - bytes);
  }
}

/**
 * The budget for a server whose largest body is `maxBody` bytes: 16 MiB, or room for two of
 * the largest bodies when that is more, so one maximal upload always fits by itself.
 */
export const preAuthBudgetBytes = (maxBody: number): number => Math.max(16 * 1024 * 1024, 2 * maxBody);
