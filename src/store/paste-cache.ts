import type { Paste } from './paste-record.ts';

interface Entry {
  paste: Paste;
  size: number;
  /** Read since eviction last passed it: it gets a second chance. */
  used: boolean;
}

/**
 * A map of pastes bounded by an estimate of their memory, evicting the least recently used
 * (approximately: the CLOCK algorithm). A hit only sets a flag instead of moving the entry,
 * so reads do not churn the map; eviction walks from the oldest entry, and one read since
 * it was last passed sends it to the back instead of out.
 */
export class PasteCache {
  readonly #map = new Map<string, Entry>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): Paste | undefined {
    const e = this.#map.get(key);
    if (e === undefined) return undefined;
    e.used = true;
    return e.paste;
  }

  /** Caches `paste` under `key`; a paste larger than a quarter of the bound is not kept. */
  set(key: string, paste: Paste): void {
    this.delete(key);
    const size = stringBytes(paste.content_json) + stringBytes(paste.title) + ENTRY_OVERHEAD;
    if (size > this.maxBytes / 4) return;
    this.#map.set(key, { paste, size, used: false });
    this.#bytes += size;
    this.#evict();
  }

  delete(key: string): void {
    const old = this.#map.get(key);
    if (old === undefined) return;
    this.#map.delete(key);
    this.#bytes -= old.size;
  }

  #evict(): void {
    // Map order is insertion order, and an entry re-inserted during the walk is met again
    // at the end of it, with its flag cleared: the walk ends.
    for (const [k, e] of this.#map) {
      if (this.#bytes <= this.maxBytes) break;
      this.#map.delete(k);
      if (e.used) {
        e.used = false;
        this.#map.set(k, e);
        continue;
      }
      this.#bytes -= e.size;
    }
  }

  get size(): number {
    return this.#map.size;
  }
  get bytes(): number {
    return this.#bytes;
  }
}

/**
 * V8 stores a string of Latin-1 characters one byte each, any other two. ENTRY_OVERHEAD is
 * the rest of an entry: the record's other fields, the entry and its map slots (512 bytes,
 * measured as the growth of the heap after a full collection over 20,000 cached pastes of
 * the benchmark's data: 2,907 bytes an entry, of which 2,170 were content and title and
 * ~260 the API's rendering of the fields), plus room for that rendering, which an upper
 * layer keeps for exactly as long as the cached object lives (api/v1/bodies.ts) and so
 * must be counted here for the bound to hold.
 */
export const ENTRY_OVERHEAD = 512 + 300;
export const stringBytes = (s: string): number => (/[^\u0000-\u00ff]/.test(s) ? 2 : 1) * s.length;
