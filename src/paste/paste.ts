import type { PasswordHash } from '../crypto/passwords.ts';

/**
 * A paste and its ids, as the service speaks of them and every store (store/, pg/) keeps
 * them; and the time format answers use.
 */
export const PRIVACIES = ['public', 'unlisted', 'private'] as const;
export type Privacy = (typeof PRIVACIES)[number];

/** Paste hashes: 10 base62 characters. The first 6 are the paste's short code. */
export const HASH_LENGTH = 10;
export const SHORTCODE_LENGTH = 6;
export const HASH_RE = /^[A-Za-z0-9]{10}$/;
export const SHORTCODE_RE = /^[A-Za-z0-9]{6}$/;

/**
 * A paste's file is named by its short code, the first six characters of its hash: one file
 * reserves both, so short codes are unique and `/s/{code}` is one file read.
 */
export const shortcodeOf = (hash: string): string => hash.slice(0, SHORTCODE_LENGTH);

/**
 * A paste as the store holds it: the fields of its file (`pastes/<ab>/<abCDEF>.json`; times
 * are epoch ms), except that the text is kept as the JSON string literal the file holds it
 * as, quotes and escapes included. Holding it once, in that form, costs a cached paste no
 * second copy, and `paste.php` sends it as it is; `contentOf` decodes it. A stored paste is
 * never changed in place: every change makes a new object, so an object is one version.
 */
export interface Paste {
  readonly v: 1;
  readonly hash: string;
  readonly title: string;
  /** The text as a JSON string literal (the file's `content`); read it with `contentOf`. */
  readonly content_json: string;
  readonly language: string;
  readonly privacy: Privacy;
  readonly highlight: 0 | 1;
  readonly burn_after_read: 0 | 1;
  /** Set once a one-time paste has been read; its content is wiped then. */
  readonly burned: boolean;
  readonly password: PasswordHash | null;
  readonly owner_id: number;
  readonly created_at: number;
  readonly updated_at: number;
  readonly expire_at: number | null;
  readonly view_count: number;
  /** A burned paste's receipt: when it was read, and through which side (README, Burn receipts). */
  readonly receipt?: Receipt | null;
  /** Which version this is: 1 when created, one more with each edit (README, Revisions). */
  readonly revision?: number;
  /**
   * An anonymous paste's delete key, as its SHA-256 (paste/anonymous.ts). Only anonymous
   * pastes have the field, so every other paste's file stays as it was written before.
   */
  readonly delete_key?: string;
  /**
   * 1: the content is an envelope its client encrypted (paste/envelope.ts), which the server
   * cannot read: it keeps and sends it as it is (README, Encrypted pastes). Absent: 0.
   */
  readonly encrypted?: 0 | 1;
  /** The paste's files (paste/files.ts), in the order given; absent when it holds none. */
  readonly files?: readonly PasteFile[];
}

/** One file of a paste as its record keeps it (paste/files.ts); the bytes are stored under `sha256`. */
export interface PasteFile {
  readonly name: string;
  readonly size: number;
  readonly type: string;
  readonly sha256: string;
  /** On a burned paste's record only: when its reader's grant fetched it (paste/file-grant.ts). */
  readonly fetched?: number;
}

/** When a one-time paste was read and how: on the web, or through the API with which token. */
export interface Receipt {
  readonly at: number;
  readonly via: 'web' | 'api';
  readonly token_id: string | null;
}

/**
 * A paste revision's entity tag (README, Caching): its hash and the time of its last edit,
 * which every edit moves forward (paste/service.ts), so no two revisions share one.
 */
export const etagOf = (p: Pick<Paste, 'hash' | 'updated_at'>): string => `"${p.hash}.${base36(p.updated_at)}"`;

/** 36 ** 6: base36 writes a number's last six base-36 digits and the rest apart. */
const B36_LOW = 2_176_782_336;

/**
 * `n.toString(36)`, which V8 writes through its slow general (fractional) radix conversion,
 * on every read's ETag. Cut in two smaller integers it is much faster (measured: see
 * bench/README.md) and gives the same digits.
 */
export function base36(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) return n.toString(36);
  const high = Math.floor(n / B36_LOW);
  const low = (n - high * B36_LOW).toString(36);
  return high === 0 ? low : high.toString(36) + low.padStart(6, '0');
}

/** The text of a paste. Decodes the stored literal, which costs a parse: call it once per use. */
export const contentOf = (p: Pick<Paste, 'content_json'>): string => JSON.parse(p.content_json) as string;

/** A text in the form a Paste holds it. */
export const encodeContent = (text: string): string => JSON.stringify(text);

/** The JSON literal of the empty text: what a burned or swept paste keeps. */
export const NO_CONTENT = '""';

export const isExpired = (p: Pick<Paste, 'expire_at'>, now: number): boolean =>
  p.expire_at !== null && p.expire_at <= now;

/**
 * A paste whose content is gone (burned, or expired and swept): a live paste never has both
 * an empty text and no files.
 */
export const isTombstone = (p: Pick<Paste, 'content_json' | 'files'>): boolean =>
  p.content_json === NO_CONTENT && (p.files === undefined || p.files.length === 0);

/** `YYYY-MM-DD HH:MM:SS` in UTC, the format every answer uses (README, Get a paste). */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
