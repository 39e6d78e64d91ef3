import { evictSecondChance } from '../cache/second-chance.ts';

/**
 * What a side makes from one version of something (a paste's encoded text, its rendered
 * code block, a QR code), kept under a key while that version is the one asked for, within
 * a byte budget, least recently used out first. A version is compared by identity: a paste
 * object is never changed (the store makes a new one for every change, burn and expiry), so
 * nothing made from an older one is ever served. An object version is held weakly: an
 * entry never keeps a paste (whose text may be a megabyte) in memory beyond the store's
 * cache, and once the paste is let go, its entry can only wait to be pushed out.
 *
 * Least recently used is approximated as the paste cache does (`evictSecondChance` in
 * cache/paste-cache.ts): a hit only sets a flag. Moving every hit to the back of the map
 * cost a page view more than the rest of the lookup.
 *
 * A cache given `keepFirst` keeps a value the first time it is made only when that says
 * so (for a version dear to make: a long paste's page); any other value is kept once its
 * key is asked for again soon (`SeenOnce`). A page read once and never again is not worth
 * keeping, and keeping every one is dear: over many pastes read at random, where a kept
 * page is seldom read again before it is pushed out, each miss put a page and a code block
 * into the long-lived heap only to drop them later, and the collector's work made a page
 * view cost more CPU than with no caching at all (measured: see bench/README.md).
 */
export class VersionCache<V> {
  readonly #entries = new Map<string, { version: unknown; weak: boolean; value: V; size: number; used: boolean }>();
  #bytes = 0;
  #made = 0;
  #reused = 0;

  /** The keys asked for lately, when not every value is kept the first time it is made. */
  readonly #seen: SeenOnce | null;

  /**
   * `sizeOf` is what an entry costs (its value, and whatever else it should answer for);
   * `keepFirst`, when given, says which versions are kept the first time they are made
   * (the others, from the second time their key is asked for); without it, all are.
   */
  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V, version: unknown) => number,
    private readonly keepFirst?: (version: unknown) => boolean,
  ) {
    this.#seen = keepFirst === undefined ? null : new SeenOnce();
  }

  /**
   * The value for `key` at `version`, made by `make` when there is none (or `usable` says the
   * one there no longer is); too large a value is not kept.
   */
  get(key: string, version: unknown, make: () => V, usable?: (value: V) => boolean): V {
    return this.getOr(key, version, make, make, usable);
  }

  /**
   * As `get`, but when the value would not be kept, `once` makes whatever the caller needs
   * for this one use instead (a page written with its view count in place, say, rather
   * than as bytes around a slot for the count).
   */
  getOr<W>(key: string, version: unknown, make: () => V, once: () => W, usable?: (value: V) => boolean): V | W {
    const hit = this.#entries.get(key);
    if (
      hit !== undefined &&
      (hit.weak ? (hit.version as WeakRef<object>).deref() : hit.version) === version &&
      (usable === undefined || usable(hit.value))
    ) {
      hit.used = true;
      this.#reused++;
      return hit.value;
    }
    // A key with an entry (of another version or minute) has been asked for before.
    if (hit === undefined && this.#seen !== null && !this.#seen.again(key) && this.keepFirst?.(version) !== true) {
      const single = once();
      this.#made++;
      return single;
    }
    const value = make();
    this.#made++;
    this.#drop(key);
    const size = this.sizeOf(value, version);
    if (size <= this.maxBytes / 2) {
      evictSecondChance(
        this.#entries,
        () => this.#bytes + size > this.maxBytes,
        (k) => this.#drop(k),
      );
      const weak = typeof version === 'object' && version !== null;
      this.#entries.set(key, { version: weak ? new WeakRef(version) : version, weak, value, size, used: false });
      this.#bytes += size;
    }
    return value;
  }

  /** Whether `key` holds a value made from `version` (asking is not a use). */
  has(key: string, version: unknown): boolean {
    const hit = this.#entries.get(key);
    return hit !== undefined && (hit.weak ? (hit.version as WeakRef<object>).deref() : hit.version) === version;
  }

  #drop(key: string): void {
    const e = this.#entries.get(key);
    if (e === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= e.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
  get size(): number {
    return this.#entries.size;
  }
  /** Values made (by `make`) and values answered from the cache, since it was built. */
  get made(): number {
    return this.#made;
  }
  get reused(): number {
    return this.#reused;
  }
}

/**
 * The keys asked for recently, in two generations of up to `perGeneration` each: when the
 * newer is full, it becomes the older and the older is let go. A key is "seen" while either
 * holds it, so it counts as asked for again within the last 1–2 generations' worth of other
 * keys. Two sets dropped whole cost nothing to age, where a queue of keys would have to be
 * trimmed one by one.
 */
export class SeenOnce {
  #newer = new Set<string>();
  #older = new Set<string>();

  constructor(readonly perGeneration = 1024) {}

  /** Whether `key` was seen recently; if not, it is now. */
  again(key: string): boolean {
    if (this.#newer.has(key) || this.#older.has(key)) return true;
    if (this.#newer.size >= this.perGeneration) {
      this.#older = this.#newer;
      this.#newer = new Set();
    }
    this.#newer.add(key);
    return false;
  }
}
