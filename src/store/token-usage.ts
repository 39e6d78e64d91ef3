import type { Hourly } from '../auth/token-hours.ts';
import { type HeldTokenUses, type SavedHour, type SavedUse, TokenUseCounts } from '../auth/token-uses.ts';
import { readStateFile, type DurableFiles } from './files.ts';

/**
 * The data folder's port of token use (auth/token-uses.ts holds the counting): one server
 * per folder, so each save rewrites its own file whole with all that is held.
 */
export class TokenUsage extends TokenUseCounts {
  constructor(
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {
    super();
  }

  async load(): Promise<void> {
    const { used, hours } = await readUsageFile(this.file);
    this.restore(used, hours);
  }

  protected async persist(_changes: unknown, held: HeldTokenUses): Promise<void> {
    const used: Record<string, [number, string | null]> = {};
    for (const [id, at] of held.lastUsed) used[id] = [at, held.lastIp.get(id) ?? null];
    // Only the hours that counted something: [[hour, count], ...] per token.
    const hours: Record<string, [number, number][]> = {};
    for (const [id, h] of held.hourly) hours[id] = counted(h);
    await this.files.writeFile(this.file, JSON.stringify({ v: 2, used, hours }));
  }
}

const counted = (h: Hourly): [number, number][] =>
  h.hours.flatMap((hour, i) => (hour >= 0 ? [[hour, h.counts[i] as number] as [number, number]] : []));

/**
 * The saved times, addresses and hours; a missing or unreadable file is an empty one (it is
 * only a convenience). Version 2 holds `[time, ip]` per token; before it, the time alone.
 */
async function readUsageFile(file: string): Promise<{ used: SavedUse[]; hours: SavedHour[] }> {
  const saved = await readStateFile(file);
  const used: SavedUse[] = [];
  const hours: SavedHour[] = [];
  if (typeof saved !== 'object' || saved === null) return { used, hours };
  const byToken = (saved as { hours?: unknown }).hours;
  for (const [id, pairs] of Object.entries(typeof byToken === 'object' && byToken !== null ? byToken : {})) {
    if (!Array.isArray(pairs)) continue;
    for (const pair of pairs as unknown[]) {
      const [hour, count] = Array.isArray(pair) ? (pair as unknown[]) : [];
      if (!Number.isSafeInteger(hour) || !Number.isSafeInteger(count) || (hour as number) < 0) continue;
      hours.push([id, hour as number, count as number]);
    }
  }
  const v2 = (saved as { v?: unknown }).v === 2;
  const entries = (v2 ? (saved as { used?: unknown }).used : saved) as Record<string, unknown> | undefined;
  for (const [id, value] of Object.entries(entries ?? {})) {
    const [at, ip] = v2 && Array.isArray(value) ? value : [value, null];
    if (typeof at !== 'number') continue;
    used.push([id, at, typeof ip === 'string' ? ip : null]);
  }
  return { used, hours };
}

/** The saved last-use times (for the CLI's token list). */
export async function readUsage(file: string): Promise<Record<string, number>> {
  return Object.fromEntries((await readUsageFile(file)).used.map(([id, at]) => [id, at]));
}
