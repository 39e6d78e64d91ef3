import { readFile } from 'node:fs/promises';
import { isErrno, type DurableFiles } from './files.ts';

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
    readonly capacity = 50,
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
    try {
      const parsed: unknown = JSON.parse(await readFile(this.file, 'utf8'));
      if (Array.isArray(parsed)) this.#hashes = parsed.filter((h): h is string => typeof h === 'string').slice(0, this.capacity);
    } catch (err) {
      if (!isErrno(err, 'ENOENT') && !(err instanceof SyntaxError)) throw err;
    }
  }

  async save(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    await this.files.writeFile(this.file, JSON.stringify(this.#hashes));
  }
}
