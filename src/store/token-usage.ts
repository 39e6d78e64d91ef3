import { readStateFile, type DurableFiles } from './files.ts';

/**
 * When each token was last used. Kept in memory and saved every few seconds to its own
 * file, which only the server writes, so recording a use never rewrites the accounts file
 * the CLI shares. Losing the last few seconds in a crash only makes "last used" older.
 */
export class TokenUsage {
  #lastUsed = new Map<string, number>();
  #dirty = false;

  constructor(
    private readonly files: DurableFiles,
    private readonly file: string,
  ) {}

  touch(tokenId: string, now: number): void {
    this.#lastUsed.set(tokenId, now);
    this.#dirty = true;
  }

  get(tokenId: string): number | undefined {
    return this.#lastUsed.get(tokenId);
  }

  async load(): Promise<void> {
    this.#lastUsed = new Map(Object.entries(await readUsage(this.file)));
  }

  async save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    await this.files.writeFile(this.file, JSON.stringify(Object.fromEntries(this.#lastUsed)));
  }
}

/** The saved map; a missing or unreadable file is an empty one (it is only a convenience). */
export async function readUsage(file: string): Promise<Record<string, number>> {
  const saved = await readStateFile(file);
  return typeof saved === 'object' && saved !== null ? (saved as Record<string, number>) : {};
}
