/**
 * A condition seen again and again (the database still not answering at start): said when
 * it begins, then at most once every `everyMs` while it lasts, so the server's log gets a
 * line per change of state and a reminder, not a line per attempt.
 */
export class Reminder {
  #since: number | null = null;
  #said = 0;

  constructor(
    private readonly now: () => number,
    private readonly everyMs: number,
  ) {}

  /** Seen once more: how long it has lasted when a line is due (0 when it begins), else null. */
  due(): number | null {
    const t = this.now();
    if (this.#since === null) {
      this.#since = t;
      this.#said = t;
      return 0;
    }
    if (t - this.#said < this.everyMs) return null;
    this.#said = t;
    return t - this.#since;
  }

  /** It is over: the next sighting begins it again, and is said at once. */
  end(): void {
    this.#since = null;
  }
}
