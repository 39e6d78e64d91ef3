import type { Paste } from '../paste/paste.ts';

/** A response body or a part of one: a string stays in the JS heap, bytes live outside it. */
export type Rendering = string | Buffer;

interface Entry {
  paste: Paste;
  size: number;
  /** Rendered forms of this exact paste object (response bodies or parts), built on first use. */
  renders: Map<string, Rendering> | null;
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

  /**
   * Caches `paste` under `key` as a compact copy (see `compact`), and returns that copy:
   * the object later gets and renders will know. A paste too large to keep is returned as is.
   */
  set(key: string, paste: Paste): Paste {
    this.delete(key);
    const json = JSON.stringify(paste.content);
    const size = stringBytes(json) + stringBytes(paste.title) + ENTRY_OVERHEAD;
    if (size > this.maxBytes / 4) return paste;
    const kept = compact(paste, json);
    this.#map.set(key, { paste: kept, size, renders: null, used: false });
    this.#bytes += size;
    this.#evict();
    return kept;
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
  render<T extends Rendering>(key: string, paste: Paste, kind: string, build: () => T): T {
    const e = this.#map.get(key);
    if (e === undefined || e.paste !== paste) return build();
    let body = e.renders?.get(kind) as T | undefined;
    if (body === undefined) {
      body = build();
      (e.renders ??= new Map()).set(kind, body);
      const size = typeof body === 'string' ? stringBytes(body) : body.length;
      e.size += size;
      this.#bytes += size;
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

const JSON_CONTENT = Symbol('content as a JSON string literal');

interface Compact extends Paste {
  readonly [JSON_CONTENT]: string;
}

/** One getter shared by every compact paste, so they all share one object shape. */
const CONTENT: PropertyDescriptor = {
  get(this: Compact): string {
    return JSON.parse(this[JSON_CONTENT]) as string;
  },
  enumerable: true,
};

/**
 * A copy of `p` that holds its content once, as the JSON string literal (quotes and escapes
 * included) that paste.php answers with, so that answer splices it in as it is. `content`
 * is still an enumerable property, so spreads, JSON.stringify and readers get the text, but
 * it is decoded on every access: read it once per use. Holding the text beside its JSON form
 * would double the memory of every cached paste; decoding (~1.5 µs for 2.5 KB) is cheaper
 * than encoding (~7 µs), so the JSON form is the one kept.
 */
function compact(p: Paste, json: string): Paste {
  const { content: _, ...rest } = p;
  return Object.defineProperties(rest, { content: CONTENT, [JSON_CONTENT]: { value: json } }) as Paste;
}

/** The paste's content as a JSON string literal: kept by a cached paste, else encoded now. */
export const contentJson = (p: Paste): string => (p as Partial<Compact>)[JSON_CONTENT] ?? JSON.stringify(p.content);

/**
 * V8 stores a string of Latin-1 characters one byte each, any other two. ENTRY_OVERHEAD is
 * the rest of an entry (the record's other fields, the entry, map slots), measured as the
 * growth of the heap after a full collection over 20,000 cached pastes of the benchmark's
 * data, each with its rendered API fields: 2,907 bytes an entry, of which 2,170 were
 * content and title and ~260 the rendering.
 */
export const ENTRY_OVERHEAD = 512;
const stringBytes = (s: string): number => (/[^\u0000-\u00ff]/.test(s) ? 2 : 1) * s.length;
