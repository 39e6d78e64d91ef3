/** Bounded in-memory caches: the paste store's, the API's rendered fields and the page parts. */

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
 * (test/cache/paste-cache.test.ts).
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

/** Bytes V8 holds a string in: one a character when every one is Latin-1, else two. */
export const stringBytes = (s: string): number => (/[^\u0000-\u00ff]/.test(s) ? 2 : 1) * s.length;
