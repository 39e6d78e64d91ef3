import { evictSecondChance, stringBytes } from './second-chance.ts';

/** What the cache needs to know of a paste to weigh it (cache/ sits below paste/, so it names no Paste). */
interface Weighed {
  readonly content_json: string;
  readonly title: string;
}

interface Entry<P extends Weighed> {
  paste: P;
  size: number;
  /** Read since eviction last passed it: it gets a second chance. */
  used: boolean;
  /** The newest view count `recount` told of (0: none), which may be beyond the paste's own. */
  views: number;
}

/**
 * A map of pastes bounded by an estimate of their memory, evicting the least recently used
 * (approximately: the CLOCK algorithm). A hit only sets a flag instead of moving the entry,
 * so reads do not churn the map; eviction (`evictSecondChance`) takes the oldest entry,
 * and one read since it was last passed sends it to the back instead of out.
 */
export class PasteCache<P extends Weighed> {
  readonly #map = new Map<string, Entry<P>>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): P | undefined {
    const e = this.#map.get(key);
    if (e === undefined) return undefined;
    e.used = true;
    return e.paste;
  }

  /** Caches `paste` under `key`; a paste larger than a quarter of the bound is not kept. */
  set(key: string, paste: P): void {
    this.delete(key);
    const size = stringBytes(paste.content_json) + stringBytes(paste.title) + ENTRY_OVERHEAD;
    if (size > this.maxBytes / 4) return;
    evictSecondChance(
      this.#map,
      () => this.#bytes + size > this.maxBytes,
      (k) => this.delete(k),
    );
    this.#map.set(key, { paste, size, used: false, views: 0 });
    this.#bytes += size;
  }

  /**
   * The paste under `key` was counted `viewCount` views and nothing else changed (pg/views.ts
   * folds views into rows): the count is kept beside the paste instead of in a new object,
   * so the object, and what upper layers keep for as long as it lives (api/v1/bodies.ts), stay.
   * Counts only grow: an older count changes nothing.
   */
  recount(key: string, viewCount: number): void {
    const e = this.#map.get(key);
    if (e !== undefined && e.views < viewCount) e.views = viewCount;
  }

  /** The newest count `recount` told of the paste under `key` (0: none), or undefined when not held. */
  viewCount(key: string): number | undefined {
    return this.#map.get(key)?.views;
  }

  delete(key: string): void {
    const old = this.#map.get(key);
    if (old === undefined) return;
    this.#map.delete(key);
    this.#bytes -= old.size;
  }

  /** Forgets every entry at once. */
  clear(): void {
    this.#map.clear();
    this.#bytes = 0;
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
 * the rest of an entry: the record's other fields, the entry and its map slots (the 512,
 * measured as the growth of the heap after a full collection over many cached pastes of the
 * benchmark's data: see bench/README.md), plus room for the API's rendering of the fields
 * and the small record of its sizes beside it (the 340), which an upper layer keeps for
 * exactly as long as the cached object lives (api/v1/bodies.ts) and so must be counted here
 * for the bound to hold.
 */
export const ENTRY_OVERHEAD = 512 + 340;
