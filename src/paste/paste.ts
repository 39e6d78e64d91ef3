/**
 * The paste's vocabulary for the layers above: the stored record and its ids (defined by
 * the store, which owns the file format) and the time format answers use.
 */
export {
  contentOf,
  encodeContent,
  etagOf,
  HASH_RE,
  isExpired,
  NO_CONTENT,
  PRIVACIES,
  SHORTCODE_RE,
  shortcodeOf,
  type Paste,
  type Privacy,
} from '../store/paste-record.ts';

/** `YYYY-MM-DD HH:MM:SS` in UTC, the format every answer uses (README, Get a paste). */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
