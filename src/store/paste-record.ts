import type { PasswordHash } from '../crypto/passwords.ts';

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
}

/**
 * A paste revision's entity tag (README, Caching): its hash and the time of its last edit,
 * which every edit moves forward (paste/service.ts), so no two revisions share one.
 */
export const etagOf = (p: Pick<Paste, 'hash' | 'updated_at'>): string => `"${p.hash}.${p.updated_at.toString(36)}"`;

/** The text of a paste. Decodes the stored literal (~1.5 µs for 2.5 KB): call it once per use. */
export const contentOf = (p: Pick<Paste, 'content_json'>): string => JSON.parse(p.content_json) as string;

/** A text in the form a Paste holds it. */
export const encodeContent = (text: string): string => JSON.stringify(text);

/** The JSON literal of the empty text: what a burned or swept paste keeps. */
export const NO_CONTENT = '""';

export const isExpired = (p: Pick<Paste, 'expire_at'>, now: number): boolean => p.expire_at !== null && p.expire_at <= now;

/** A paste whose content is gone (burned, or expired and swept): live content is never empty. */
export const isTombstone = (p: Pick<Paste, 'content_json'>): boolean => p.content_json === NO_CONTENT;

/** The file's text: the fields, then `content` spliced in as the literal it already is. */
export function fileText(p: Paste): string {
  const { content_json: content, ...fields } = p;
  return `${JSON.stringify(fields).slice(0, -1)},"content":${content}}`;
}

/**
 * A paste from its file's text (which may hold `content` anywhere among its fields). Built
 * field by field, in the order `PasteService.create` writes them, so every paste object has
 * one shape: objects copied out of `JSON.parse` have one per file's order and value types,
 * which made every read of a paste's fields megamorphic (~7 % of a cached read's CPU).
 */
export function parseFile(text: string): Paste {
  const f = JSON.parse(text) as Omit<Paste, 'content_json'> & { content: string };
  return {
    v: 1,
    hash: f.hash,
    title: f.title,
    content_json: encodeContent(f.content),
    language: f.language,
    privacy: f.privacy,
    highlight: f.highlight,
    burn_after_read: f.burn_after_read,
    burned: f.burned,
    password: f.password,
    owner_id: f.owner_id,
    created_at: f.created_at,
    updated_at: f.updated_at,
    expire_at: f.expire_at,
    view_count: f.view_count,
  };
}
