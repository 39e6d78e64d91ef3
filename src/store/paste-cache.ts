import type { Paste } from '../paste/paste.ts';

interface Entry {
  paste: Paste;
  size: number;
  /** Rendered forms of this exact paste object (response bodies), built on first use. */
  renders: Map<string, Buffer> | null;
  /** Read since eviction last passed it: it gets a second chance. */
  used: boolean;
}

/**
 * A map of pastes bounded by an estimate of their memory, evicting the least recently used
 * (approximately: the CLOCK algorithm). A hit only sets a flag instead of moving the entry,
 * so reads do not churn the map; eviction walks from the oldest entry, and one read since
 * it was last passed sends it to the back instead of out. Next to each
 * paste it can keep rendered forms of it (e.g. the API's JSON body); they belong to that
 * paste object, so they vanish with it when the paste is replaced, deleted or evicted, and
 * a stale rendering can never be served.
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

  set(key: string, paste: Paste): void {
    this.delete(key);
    const size = sizeOf(paste);
    if (size > this.maxBytes / 4) return;
    this.#map.set(key, { paste, size, renders: null, used: false });
    this.#bytes += size;
    this.#evict();
  }

  delete(key: string): void {
    const old = this.#map.get(key);
    if (old === undefined) return;
    this.#map.delete(key);
    this.#bytes -= old.size;
  }

  /**
   * The `kind` rendering of `paste`, built once and kept while this very object is cached.
   * For an object that is not (or no longer) the cached one, it is built and not kept.
   */
  render(key: string, paste: Paste, kind: string, build: () => Buffer): Buffer {
    const e = this.#map.get(key);
    if (e === undefined || e.paste !== paste) return build();
    let body = e.renders?.get(kind);
    if (body === undefined) {
      body = build();
      (e.renders ??= new Map()).set(kind, body);
      e.size += body.length;
      this.#bytes += body.length;
      this.#evict();
    }
    return body;
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
 * the rest of an entry (the record's other fields, map slots, buffer headers), measured with
 * process.memoryUsage() over 20,000 cached pastes.
 */
const ENTRY_OVERHEAD = 1024;
const sizeOf = (p: Paste): number => stringBytes(p.content) + stringBytes(p.title) + ENTRY_OVERHEAD;
const stringBytes = (s: string): number => (/[^\u0000-\u00ff]/.test(s) ? 2 : 1) * s.length;
