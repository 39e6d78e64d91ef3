import { ClockHand } from '../store/paste-cache.ts';

/**
 * What a side makes from one version of something (a paste's encoded text, its rendered
 * code block, a QR code), kept under a key while that version is the one asked for, within
 * a byte budget, least recently used out first. A version is compared by identity: a paste
 * object is never changed (the store makes a new one for every change, burn and expiry), so
 * nothing made from an older one is ever served. An object version is held weakly: an
 * entry never keeps a paste (whose text may be a megabyte) in memory beyond the store's
 * cache, and once the paste is let go, its entry can only wait to be pushed out.
 *
 * Least recently used is approximated as the paste cache does (`ClockHand` in
 * store/paste-cache.ts): a hit only sets a flag. Moving every hit to the back of the map
 * cost a page view more than the rest of the lookup.
 */
export class VersionCache<V> {
  readonly #entries = new Map<string, { version: unknown; weak: boolean; value: V; size: number; used: boolean }>();
  readonly #clock = new ClockHand(this.#entries);
  #bytes = 0;
  #made = 0;
  #reused = 0;

  /** `sizeOf` is what an entry costs (its value, and whatever else it should answer for). */
  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V, version: unknown) => number,
  ) {}

  /**
   * The value for `key` at `version`, made by `make` when there is none (or `usable` says the
   * one there no longer is); too large a value is not kept.
   */
  get(key: string, version: unknown, make: () => V, usable?: (value: V) => boolean): V {
    const hit = this.#entries.get(key);
    if (hit !== undefined && (hit.weak ? (hit.version as WeakRef<object>).deref() : hit.version) === version && (usable === undefined || usable(hit.value))) {
      hit.used = true;
      this.#reused++;
      return hit.value;
    }
    const value = make();
    this.#made++;
    this.#drop(key);
    const size = this.sizeOf(value, version);
    if (size <= this.maxBytes / 2) {
      this.#clock.evict(() => this.#bytes + size > this.maxBytes, (k) => this.#drop(k));
      const weak = typeof version === 'object' && version !== null;
      this.#entries.set(key, { version: weak ? new WeakRef(version) : version, weak, value, size, used: false });
      this.#bytes += size;
    }
    return value;
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
