import { countHour, emptyHourly, HOUR_MS, type Hourly, lastDayOf } from '../auth/token-hours.ts';
import { readStateFile, type DurableFiles } from './files.ts';

/**
 * When each token was last used, and from which address. Kept in memory and saved every
 * few seconds to its own file, which only the server writes, so recording a use never
 * rewrites the accounts file the CLI shares. Losing the last few seconds in a crash only
 * makes "last used" older.
 */
export class TokenUsage {
  #lastUsed = new Map<string, number>();
  #lastIp = new Map<string, string>();
  #hourly = new Map<string, Hourly>();
  #dirty = false;

  constructor(
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {}

  touch(tokenId: string, now: number, ip?: string): void {
    this.#lastUsed.set(tokenId, now);
    if (ip !== undefined) this.#lastIp.set(tokenId, ip);
    this.#dirty = true;
    const hour = Math.floor(now / HOUR_MS);
    let h = this.#hourly.get(tokenId);
    if (h === undefined) this.#hourly.set(tokenId, (h = emptyHourly()));
    countHour(h, hour);
  }

  /** Requests authenticated with the token in the current hour and the 23 before it (README, Web pages: API Tokens). */
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

  async load(): Promise<void> {
    const { used, ips, hourly } = await readUsageFile(this.file);
    this.#lastUsed = new Map(Object.entries(used));
    this.#lastIp = new Map(Object.entries(ips));
    this.#hourly = hourly;
  }

  async save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    const used: Record<string, [number, string | null]> = {};
    for (const [id, at] of this.#lastUsed) used[id] = [at, this.#lastIp.get(id) ?? null];
    // Only the hours that counted something: [[hour, count], ...] per token.
    const hours: Record<string, [number, number][]> = {};
    for (const [id, h] of this.#hourly)
      hours[id] = h.hours.flatMap((hour, i) => (hour >= 0 ? [[hour, h.counts[i] as number] as [number, number]] : []));
    await this.files.writeFile(this.file, JSON.stringify({ v: 2, used, hours }));
  }
}

/**
 * The saved times and addresses; a missing or unreadable file is an empty one (it is only a
 * convenience). Version 2 holds `[time, ip]` per token; before it, the time alone.
 */
async function readUsageFile(
  file: string,
): Promise<{ used: Record<string, number>; ips: Record<string, string>; hourly: Map<string, Hourly> }> {
  const saved = await readStateFile(file);
  const used: Record<string, number> = {};
  const ips: Record<string, string> = {};
  const hourly = new Map<string, Hourly>();
  if (typeof saved !== 'object' || saved === null) return { used, ips, hourly };
  const hours = (saved as { hours?: unknown }).hours;
  for (const [id, pairs] of Object.entries(typeof hours === 'object' && hours !== null ? hours : {})) {
    if (!Array.isArray(pairs)) continue;
    const h = emptyHourly();
    for (const pair of pairs as unknown[]) {
      const [hour, count] = Array.isArray(pair) ? (pair as unknown[]) : [];
      if (!Number.isSafeInteger(hour) || !Number.isSafeInteger(count) || (hour as number) < 0) continue;
      h.hours[(hour as number) % 24] = hour as number;
      h.counts[(hour as number) % 24] = count as number;
    }
    hourly.set(id, h);
  }
  const v2 = (saved as { v?: unknown }).v === 2;
  const entries = (v2 ? (saved as { used?: unknown }).used : saved) as Record<string, unknown> | undefined;
  for (const [id, value] of Object.entries(entries ?? {})) {
    const [at, ip] = v2 && Array.isArray(value) ? value : [value, null];
    if (typeof at !== 'number') continue;
    used[id] = at;
    if (typeof ip === 'string') ips[id] = ip;
  }
  return { used, ips, hourly };
}

/** The saved last-use times (for the CLI's token list). */
export async function readUsage(file: string): Promise<Record<string, number>> {
  return (await readUsageFile(file)).used;
}
