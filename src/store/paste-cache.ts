import type { Paste } from '../paste/paste.ts';

/** A least-recently-used map of pastes bounded by an estimate of their memory. */
export class PasteCache {
  readonly #map = new Map<string, Paste>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): Paste | undefined {
    const p = this.#map.get(key);
    if (p !== undefined) {
      // Re-insert to mark as most recently used (Map keeps insertion order).
      this.#map.delete(key);
      this.#map.set(key, p);
    }
    return p;
  }

  set(key: string, paste: Paste): void {
    this.delete(key);
    const size = sizeOf(paste);
    if (size > this.maxBytes / 4) return;
    this.#map.set(key, paste);
    this.#bytes += size;
    for (const [k, old] of this.#map) {
      if (this.#bytes <= this.maxBytes) break;
      this.#map.delete(k);
      this.#bytes -= sizeOf(old);
    }
  }

  delete(key: string): void {
    const old = this.#map.get(key);
    if (old === undefined) return;
    this.#map.delete(key);
    this.#bytes -= sizeOf(old);
  }

  get size(): number {
    return this.#map.size;
  }
  get bytes(): number {
    return this.#bytes;
  }
}

/** JS strings cost up to two bytes a character; 512 covers the record's other fields. */
const sizeOf = (p: Paste): number => 2 * (p.content.length + p.title.length) + 512;
