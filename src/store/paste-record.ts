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
  /** A burned paste's receipt: when it was read, and through which side (README, Burn receipts). */
  readonly receipt?: Receipt | null;
  /** Which version this is: 1 when created, one more with each edit (README, Revisions). */
  readonly revision?: number;
}

/** When a one-time paste was read and how: on the web, or through the API with which token. */
export interface Receipt {
  readonly at: number;
  readonly via: 'web' | 'api';
  readonly token_id: string | null;
}

const isReceipt = (r: unknown): boolean => {
  const o = r as Partial<Receipt> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    isTime(o.at) &&
    (o.via === 'web' || o.via === 'api') &&
    (o.token_id === null || typeof o.token_id === 'string')
  );
};

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

/** A paste whose content is gone (burned, or expired and swept): live content is never empty. */
export const isTombstone = (p: Pick<Paste, 'content_json'>): boolean => p.content_json === NO_CONTENT;

/**
 * A paste file that cannot be a paste: unparsable, or a field missing or of the wrong type.
 * Carries what could be read of it (hash, owner), so its owner can still delete it.
 */
export class DamagedRecord extends Error {
  constructor(
    readonly reason: string,
    readonly hash: string | null,
    readonly ownerId: number | null,
  ) {
    super(reason);
  }
}

const isTime = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isFlag = (v: unknown): boolean => v === 0 || v === 1;

/** The first field of a parsed paste file that is missing or of the wrong type, or null. */
function wrongField(f: Record<string, unknown>): string | null {
  if (typeof f['hash'] !== 'string' || !HASH_RE.test(f['hash'])) return 'hash';
  if (typeof f['title'] !== 'string') return 'title';
  if (typeof f['content'] !== 'string') return 'content';
  if (typeof f['language'] !== 'string') return 'language';
  if (!(PRIVACIES as readonly unknown[]).includes(f['privacy'])) return 'privacy';
  if (!isFlag(f['highlight'])) return 'highlight';
  if (!isFlag(f['burn_after_read'])) return 'burn_after_read';
  if (typeof f['burned'] !== 'boolean') return 'burned';
  if (f['password'] !== null && typeof f['password'] !== 'string') return 'password';
  if (!Number.isInteger(f['owner_id'])) return 'owner_id';
  if (!isTime(f['created_at'])) return 'created_at';
  if (!isTime(f['updated_at'])) return 'updated_at';
  if (f['expire_at'] !== null && !isTime(f['expire_at'])) return 'expire_at';
  if (!Number.isInteger(f['view_count']) || (f['view_count'] as number) < 0) return 'view_count';
  if (f['receipt'] !== undefined && f['receipt'] !== null && !isReceipt(f['receipt'])) return 'receipt';
  if (f['revision'] !== undefined && (!Number.isInteger(f['revision']) || (f['revision'] as number) < 1))
    return 'revision';
  return null;
}

/**
 * The hash and owner a torn paste file still shows, so its owner can delete it. Only from
 * the start of a file as `fileText` writes it (fields first); a quote inside a string is
 * always escaped, so `"owner_id":` outside one is the field, and its number must be whole.
 */
function salvage(text: string): { hash: string | null; ownerId: number | null } {
  const head = /^\{"v":1,"hash":"([A-Za-z0-9]{10})",/.exec(text);
  if (head === null) return { hash: null, ownerId: null };
  const owner = /"owner_id":(\d{1,15})[,}]/.exec(text);
  return { hash: head[1] ?? null, ownerId: owner === null ? null : Number(owner[1]) };
}

/**
 * A kept revision's file text: the paste's, led by the size of its text, so a History page
 * learns each revision's time and size from the first few KB of its file (`keptFacts`).
 */
export const keptText = (p: Paste): string => `{"bytes":${Buffer.byteLength(contentOf(p))},${fileText(p).slice(1)}`;

/**
 * The time and text size of revision `hash` from the start of its kept file, or null when
 * that start does not show them (a file kept before sizes led it, or a damaged one).
 */
export function keptFacts(head: string, hash: string): { savedAt: number; bytes: number } | null {
  const m = /^\{"bytes":(\d{1,10}),"v":1,"hash":"([A-Za-z0-9]{10})",/.exec(head);
  if (m === null || m[2] !== hash) return null;
  // Outside strings (whose quotes are escaped), `"updated_at":` is the field itself.
  const at = /"updated_at":(\d{1,16})[,}]/.exec(head);
  return at === null ? null : { savedAt: Number(at[1]), bytes: Number(m[1]) };
}

/** The file's text: the fields, then `content` spliced in as the literal it already is. */
export function fileText(p: Paste): string {
  const { content_json: content, ...fields } = p;
  return `${JSON.stringify(fields).slice(0, -1)},"content":${content}}`;
}

/**
 * A paste from its file's text (which may hold `content` anywhere among its fields). Built
 * field by field, in the order `PasteService.create` writes them, so every paste object has
 * one shape: objects copied out of `JSON.parse` have one per file's order and value types,
 * which made every read of a paste's fields megamorphic, and slow on every cached read.
 */
export function parseFile(text: string): Paste {
  let f: Omit<Paste, 'content_json'> & { content: string };
  try {
    f = JSON.parse(text) as typeof f;
  } catch {
    // JSON.parse of a string throws SyntaxError only: a torn or overwritten file.
    const { hash, ownerId } = salvage(text);
    throw new DamagedRecord(
      text.length === 0 ? 'the file is empty' : 'the file is not valid JSON (truncated or overwritten?)',
      hash,
      ownerId,
    );
  }
  const wrong = typeof f !== 'object' || f === null ? 'not an object' : wrongField(f);
  if (wrong !== null) {
    const owner = typeof f === 'object' && f !== null && Number.isInteger(f.owner_id) ? f.owner_id : null;
    const hash =
      typeof f === 'object' && f !== null && typeof f.hash === 'string' && HASH_RE.test(f.hash) ? f.hash : null;
    throw new DamagedRecord(`the record is malformed: ${wrong}`, hash, owner);
  }
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
    receipt: f.receipt ?? null,
    revision: f.revision ?? 1,
  };
}
