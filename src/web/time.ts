import { formatTime } from '../paste/paste.ts';
import { html, type SafeHtml } from './html.ts';

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

/** A `<time>` element showing the relative time, with the exact UTC time on hover. */
export function timeTag(ms: number, now: number): SafeHtml {
  return html`<time datetime="${new Date(ms).toISOString()}" title="${formatTime(ms)} UTC">${relative(ms, now)}</time>`;
}
