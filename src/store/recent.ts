import { readStateFile, type DurableFiles } from './files.ts';

/**
 * The most recently created public pastes, for the home page. Kept in memory and saved
 * with the other state on shutdown and every few seconds; it is a convenience list, so
 * readers re-check each paste (it may since have been deleted, burned or made private).
 */
export class RecentPastes {
  #hashes: string[] = [];
  #dirty = false;

  constructor(
    private readonly files: DurableFiles,
    private readonly file: string,
    /** Ten pages of the home page's list (README, Web pages). */
    readonly capacity = 200,
  ) {}

  add(hash: string): void {
    this.#hashes = [hash, ...this.#hashes.filter((h) => h !== hash)].slice(0, this.capacity);
    this.#dirty = true;
  }

  remove(hash: string): void {
    const next = this.#hashes.filter((h) => h !== hash);
    if (next.length !== this.#hashes.length) this.#dirty = true;
    this.#hashes = next;
  }

  /** Newest first. */
  list(): readonly string[] {
    return this.#hashes;
  }

  async load(): Promise<void> {
    const saved = await readStateFile(this.file);
    if (Array.isArray(saved))
      this.#hashes = saved.filter((h): h is string => typeof h === 'string').slice(0, this.capacity);
  }

  async save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    await this.files.writeFile(this.file, JSON.stringify(this.#hashes));
  }
}
