/** Durations of the `expiry` field (README, Create a paste); `1m` is 30 days, `never` is null. */
export const EXPIRY_MS = {
  never: null,
  '10m': 10 * 60_000,
  '1h': 3_600_000,
  '1d': 86_400_000,
  '1w': 7 * 86_400_000,
  '1m': 30 * 86_400_000,
} as const satisfies Record<string, number | null>;

export type Expiry = keyof typeof EXPIRY_MS;

export const isExpiry = (s: string): s is Expiry => Object.hasOwn(EXPIRY_MS, s);

/** The absolute expiry time for a choice made at `now`. */
export function expireAt(expiry: Expiry, now: number): number | null {
  const ms = EXPIRY_MS[expiry];
  return ms === null ? null : now + ms;
}
