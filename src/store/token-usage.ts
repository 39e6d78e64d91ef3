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
  #dirty = false;

  constructor(
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {}

  touch(tokenId: string, now: number, ip?: string): void {
    this.#lastUsed.set(tokenId, now);
    if (ip !== undefined) this.#lastIp.set(tokenId, ip);
    this.#dirty = true;
  }

  get(tokenId: string): number | undefined {
    return this.#lastUsed.get(tokenId);
  }

  /** The address the token was last used from, when known. */
  ip(tokenId: string): string | undefined {
    return this.#lastIp.get(tokenId);
  }

  async load(): Promise<void> {
    const { used, ips } = await readUsageFile(this.file);
    this.#lastUsed = new Map(Object.entries(used));
    this.#lastIp = new Map(Object.entries(ips));
  }

  async save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    const used: Record<string, [number, string | null]> = {};
    for (const [id, at] of this.#lastUsed) used[id] = [at, this.#lastIp.get(id) ?? null];
    await this.files.writeFile(this.file, JSON.stringify({ v: 2, used }));
  }
}

/**
 * The saved times and addresses; a missing or unreadable file is an empty one (it is only a
 * convenience). Version 2 holds `[time, ip]` per token; before it, the time alone.
 */
async function readUsageFile(file: string): Promise<{ used: Record<string, number>; ips: Record<string, string> }> {
  const saved = await readStateFile(file);
  const used: Record<string, number> = {};
  const ips: Record<string, string> = {};
  if (typeof saved !== 'object' || saved === null) return { used, ips };
  const v2 = (saved as { v?: unknown }).v === 2;
  const entries = (v2 ? (saved as { used?: unknown }).used : saved) as Record<string, unknown> | undefined;
  for (const [id, value] of Object.entries(entries ?? {})) {
    const [at, ip] = v2 && Array.isArray(value) ? value : [value, null];
    if (typeof at !== 'number') continue;
    used[id] = at;
    if (typeof ip === 'string') ips[id] = ip;
  }
  return { used, ips };
}

/** The saved last-use times (for the CLI's token list). */
export async function readUsage(file: string): Promise<Record<string, number>> {
  return (await readUsageFile(file)).used;
}
