/** What the operator hears of the database's state: once when it stops answering, once when it answers again. */
export interface ProbeNews {
  down(err: unknown): void;
  up(): void;
}

/**
 * `/healthz`'s word on the database, renewed in the background (pg/open.ts). Probes overlap
 * while each may wait out DATABASE_TIMEOUT_MS, so only news newer than what was heard counts:
 * a probe sent during an outage that fails after a later one succeeded changes nothing.
 */
export class DatabaseProbe {
  #answering = true;
  #sent = 0;
  #heard = 0;

  constructor(
    private readonly check: () => Promise<unknown>,
    private readonly news: ProbeNews,
  ) {}

  get answering(): boolean {
    return this.#answering;
  }

  /** Sends one probe; its outcome is applied when it comes, unless a later probe's came first. */
  probe(): Promise<void> {
    const n = ++this.#sent;
    return this.check().then(
      () => this.#settle(n, true, undefined),
      (err: unknown) => this.#settle(n, false, err),
    );
  }

  #settle(n: number, answered: boolean, err: unknown): void {
    if (n < this.#heard) return;
    this.#heard = n;
    if (answered && !this.#answering) this.news.up();
    if (!answered && this.#answering) this.news.down(err);
    this.#answering = answered;
  }
}
