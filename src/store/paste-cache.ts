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
 * so reads do not churn the map; eviction (`evictSecondChance`) takes the oldest entry,
 * and one read since it was last passed sends it to the back instead of out.
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
    evictSecondChance(
      this.#map,
      () => this.#bytes + size > this.maxBytes,
      (k) => this.delete(k),
    );
    this.#map.set(key, { paste, size, used: false });
    this.#bytes += size;
  }

  delete(key: string): void {
    const old = this.#map.get(key);
    if (old === undefined) return;
    this.#map.delete(key);
    this.#bytes -= old.size;
  }

  get size(): number {
    return this.#map.size;
  }
  get bytes(): number {
    return this.#bytes;
  }
}

/**
 * Second-chance ("CLOCK") eviction over a Map, which keeps insertion order; the paste cache
 * and the page parts' caches (pipeline/version-cache.ts) share it. A hit only sets `used`.
 * Before an entry is added, while `over()` says it would not fit, this walks from the
 * oldest entry: a used one goes to the back with its flag cleared, an unused one is
 * dropped. What was read since the walk last passed it stays one more round; what is
 * added joins at the back.
 *
 * Each walk starts at the front and steps over the holes that dropped and moved entries
 * leave until V8 compacts the table. A hand kept from one walk to the next (a Map iterator)
 * would be faster (measured: see bench/README.md), but an iterator keeps every table the
 * map outgrows or compacts alive, keys and values, until it next moves: a cache under its
 * bound never moves it, and deleted pastes' text piled up without bound
 * (test/store/paste-cache.test.ts).
 */
export function evictSecondChance<E extends { used: boolean }>(
  map: Map<string, E>,
  over: () => boolean,
  drop: (key: string) => void,
): void {
  for (const [key, entry] of map) {
    if (!over()) return;
    if (entry.used) {
      entry.used = false;
      map.delete(key);
      map.set(key, entry);
    } else drop(key);
  }
}

/**
 * V8 stores a string of Latin-1 characters one byte each, any other two. ENTRY_OVERHEAD is
 * the rest of an entry: the record's other fields, the entry and its map slots (the 512,
 * measured as the growth of the heap after a full collection over many cached pastes of the
 * benchmark's data: see bench/README.md), plus room for the API's rendering of the fields
 * and the small record of its sizes beside it (the 340), which an upper layer keeps for
 * exactly as long as the cached object lives (api/v1/bodies.ts) and so must be counted here
 * for the bound to hold.
 */
export const ENTRY_OVERHEAD = 512 + 340;
export const stringBytes = (s: string): number => (/[^\u0000-\u00ff]/.test(s) ? 2 : 1) * s.length;
