import { formatTime } from '../paste/paste.ts';
import { html, raw, type SafeHtml } from './html.ts';

const MINUTE: [number, string] = [60_000, 'minute'];
const UNITS: [number, string][] = [
  [365 * 86_400_000, 'year'],
  [30 * 86_400_000, 'month'],
  [7 * 86_400_000, 'week'],
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  MINUTE,
];

/** "3 hours ago" / "in 2 days": coarse on purpose, the exact time is in the tooltip. */
export function relative(ms: number, now: number): string {
  const d = ms - now;
  const abs = Math.abs(d);
  if (abs < 60_000) return d <= 0 ? 'just now' : 'in less than a minute';
  const [size, unit] = UNITS.find(([s]) => abs >= s) ?? MINUTE;
  const n = Math.floor(abs / size);
  const words = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return d < 0 ? `${words} ago` : `in ${words}`;
}

/**
 * The `<time>` elements of moments, with their opening tags kept: a list page draws the same
 * pastes' times on every view, and two Date conversions per moment were a large share of the
 * home page's CPU. One is made at start and shared through the web's dependencies. Bounded
 * by emptying it whole when full: refilling costs what not keeping it did.
 */
export class TimeTags {
  readonly #openers = new Map<number, string>();

  constructor(readonly maxKept = 4_096) {}

  /** How many opening tags are kept now. */
  get kept(): number {
    return this.#openers.size;
  }

  /** A `<time>` element showing the relative time, with the exact UTC time on hover. */
  tag(ms: number, now: number): SafeHtml {
    return html`${raw(this.#opener(ms))}${relative(ms, now)}</time>`;
  }

  #opener(ms: number): string {
    let tag = this.#openers.get(ms);
    if (tag === undefined) {
      if (this.#openers.size >= this.maxKept) this.#openers.clear();
      const iso = new Date(ms).toISOString();
      tag = html`<time datetime="${iso}" title="${formatTime(ms)} UTC">`.value;
      this.#openers.set(ms, tag);
    }
    return tag;
  }
}
