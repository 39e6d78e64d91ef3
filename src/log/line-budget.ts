import { refill, take, type BucketState } from '../ratelimit/bucket.ts';

/** API log lines a client may have a minute for requests without a valid token (README, API request log). */
export const UNAUTHENTICATED_LINES_PER_MINUTE = 60;

/** How often clients whose budget has refilled are forgotten. */
const PRUNE_MS = 60_000;

interface Client {
  state: BucketState;
  /** Its requests not logged since its last line. */
  unlogged: number;
}

/**
 * A budget of API log lines per client (its budget key: an address, an IPv6 network), for
 * requests that no valid token pays for. Past it, requests are answered as ever but not
 * each logged: the client's next line that is says how many were not (`unlogged`), and
 * the total is a metric. So a client without a token grows the log by a bounded amount a
 * minute, however fast it asks. In memory only: a restart forgets it.
 */
export class LineBudget {
  readonly #clients = new Map<string, Client>();
  readonly #now: () => number;
  readonly #perMinute: number;
  #unlogged = 0;
  #pruned: number;

  constructor(now: () => number, perMinute = UNAUTHENTICATED_LINES_PER_MINUTE) {
    this.#now = now;
    this.#perMinute = perMinute;
    this.#pruned = now();
  }

  /** Requests not logged since start (README, Metrics). */
  get unlogged(): number {
    return this.#unlogged;
  }

  /** Clients remembered now. */
  get size(): number {
    return this.#clients.size;
  }

  /**
   * Whether the client's request gets a line: null when not, else how many of its requests
   * before it were not logged (0 as a rule).
   */
  admit(key: string): number | null {
    const now = this.#now();
    if (now - this.#pruned >= PRUNE_MS) this.#prune(now);
    const client = this.#clients.get(key);
    const d = take(client?.state, this.#perMinute, now);
    if (client === undefined) {
      this.#clients.set(key, { state: d.state, unlogged: 0 });
      return 0;
    }
    client.state = d.state;
    if (!d.allowed) {
      client.unlogged++;
      this.#unlogged++;
      return null;
    }
    const unlogged = client.unlogged;
    client.unlogged = 0;
    return unlogged;
  }

  /**
   * Forgets clients whose budget has refilled: they are as good as new. What such a client
   * had not had logged is then told only by the metric.
   */
  #prune(now: number): void {
    this.#pruned = now;
    for (const [key, c] of this.#clients)
      if (refill(c.state, this.#perMinute, now).tokens >= this.#perMinute) this.#clients.delete(key);
  }
}
