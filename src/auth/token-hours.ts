/**
 * A token's requests per hour over the last day, as both backends count them in memory
 * (auth/token-uses.ts; README, Web pages: API Tokens).
 */
export const HOUR_MS = 3_600_000;

/** Slot `h % 24` counts epoch hour `h`; an hour not counted is -1. */
export interface Hourly {
  hours: number[];
  counts: number[];
}

export const emptyHourly = (): Hourly => ({
  hours: new Array<number>(24).fill(-1),
  counts: new Array<number>(24).fill(0),
});

/** Counts one request in `hour`, the slot's older hour forgotten. */
export function countHour(h: Hourly, hour: number): void {
  const slot = hour % 24;
  if (h.hours[slot] !== hour) {
    h.hours[slot] = hour;
    h.counts[slot] = 0;
  }
  (h.counts[slot] as number)++;
}

/** Requests in the hour of `now` and the 23 before it. */
export function lastDayOf(h: Hourly | undefined, now: number): number {
  if (h === undefined) return 0;
  const hour = Math.floor(now / HOUR_MS);
  let sum = 0;
  for (let i = 0; i < 24; i++)
    if ((h.hours[i] as number) > hour - 24 && (h.hours[i] as number) <= hour) sum += h.counts[i] as number;
  return sum;
}
