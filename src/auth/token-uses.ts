import { countHour, emptyHourly, HOUR_MS, type Hourly, lastDayOf } from './token-hours.ts';

/** A token's use since the last save: its latest time and address, and its requests by epoch hour. */
export interface TokenUseChange {
  at: number;
  ip: string | null;
  hours: Map<number, number>;
}

/** A token's saved last use, as a backend reads it back. */
export type SavedUse = readonly [tokenId: string, at: number, ip: string | null];
/** A token's saved requests in one epoch hour. */
export type SavedHour = readonly [tokenId: string, hour: number, count: number];

/** All that is held of every token, as the data folder saves it whole. */
export interface HeldTokenUses {
  readonly lastUsed: ReadonlyMap<string, number>;
  readonly lastIp: ReadonlyMap<string, string>;
  readonly hourly: ReadonlyMap<string, Hourly>;
}

/**
 * When each token was last used, from which address, and how often in each of the last 24
 * hours (README, Web pages: API Tokens), for both backends: a use is counted in memory, with
 * no write (it is on every authenticated request), and saved every few seconds; losing the
 * last few seconds in a crash only makes "last used" older. The port is `persist`: the data
 * folder rewrites its own file with all that is held (only the server writes it, so a use
 * never rewrites the accounts file the CLI shares); PostgreSQL adds the changes since the
 * last save to rows every instance shares (store/token-usage.ts, pg/token-usage.ts).
 */
export abstract class TokenUseCounts {
  #lastUsed = new Map<string, number>();
  #lastIp = new Map<string, string>();
  #hourly = new Map<string, Hourly>();
  /** What changed since the last save, by token. */
  #changes = new Map<string, TokenUseChange>();
  /** Saves, one at a time, so uses taken for one are never counted by another. */
  #saving: Promise<void> = Promise.resolve();

  /** Saves the uses counted since the last save; `held` is everything known, theirs included. */
  protected abstract persist(changes: ReadonlyMap<string, TokenUseChange>, held: HeldTokenUses): Promise<void>;

  touch(tokenId: string, now: number, ip?: string): void {
    this.#lastUsed.set(tokenId, now);
    if (ip !== undefined) this.#lastIp.set(tokenId, ip);
    const hour = Math.floor(now / HOUR_MS);
    let h = this.#hourly.get(tokenId);
    if (h === undefined) this.#hourly.set(tokenId, (h = emptyHourly()));
    countHour(h, hour);
    let c = this.#changes.get(tokenId);
    if (c === undefined) this.#changes.set(tokenId, (c = { at: now, ip: null, hours: new Map() }));
    c.at = Math.max(c.at, now);
    if (ip !== undefined) c.ip = ip;
    c.hours.set(hour, (c.hours.get(hour) ?? 0) + 1);
  }

  /** Requests authenticated with the token in the current hour and the 23 before it. */
  lastDay(tokenId: string, now: number): number {
    return lastDayOf(this.#hourly.get(tokenId), now);
  }

  get(tokenId: string): number | undefined {
    return this.#lastUsed.get(tokenId);
  }

  /** The address the token was last used from, when known. */
  ip(tokenId: string): string | undefined {
    return this.#lastIp.get(tokenId);
  }

  /** Replaces what is held with what was saved (at start). */
  protected restore(used: Iterable<SavedUse>, hours: Iterable<SavedHour>): void {
    this.#lastUsed = new Map();
    this.#lastIp = new Map();
    for (const [id, at, ip] of used) {
      this.#lastUsed.set(id, at);
      if (ip !== null) this.#lastIp.set(id, ip);
    }
    this.#hourly = new Map();
    for (const [id, hour, count] of hours) {
      let h = this.#hourly.get(id);
      if (h === undefined) this.#hourly.set(id, (h = emptyHourly()));
      h.hours[hour % 24] = hour;
      h.counts[hour % 24] = count;
    }
  }

  /** Saves the uses counted since the last save, if any. A failed save keeps them for the next one. */
  save(): Promise<void> {
    const run = this.#saving.then(() => this.#save());
    this.#saving = run.catch(() => undefined);
    return run;
  }

  async #save(): Promise<void> {
    if (this.#changes.size === 0) return;
    const batch = this.#changes;
    this.#changes = new Map();
    try {
      await this.persist(batch, { lastUsed: this.#lastUsed, lastIp: this.#lastIp, hourly: this.#hourly });
    } catch (err) {
      this.#restoreChanges(batch);
      throw err;
    }
  }

  /** Puts a failed save's uses back, ahead of those counted meanwhile. */
  #restoreChanges(batch: Map<string, TokenUseChange>): void {
    for (const [id, newer] of this.#changes) {
      const older = batch.get(id);
      if (older === undefined) {
        batch.set(id, newer);
        continue;
      }
      older.at = Math.max(older.at, newer.at);
      if (newer.ip !== null) older.ip = newer.ip;
      for (const [hour, count] of newer.hours) older.hours.set(hour, (older.hours.get(hour) ?? 0) + count);
    }
    this.#changes = batch;
  }
}
