import { hash, timingSafeEqual } from 'node:crypto';
import { RandomIds } from '../crypto/random.ts';
import type { Fields } from '../http/fields.ts';
import type { Decision } from '../ratelimit/bucket.ts';
import type { Limiter, Maybe } from '../ratelimit/limiter.ts';
import { EXPIRY_MS, type Expiry } from './expiry.ts';
import type { Problem } from './validate.ts';

/**
 * Pastes made without an account (README, Anonymous pastes), when the operator opens that
 * door: who owns them, the limits they are held to, and the delete key their maker gets.
 */

/** An anonymous paste's owner id: no account has it (ids start at 1), so no user owns one. */
export const ANONYMOUS_OWNER = 0;
/** How an anonymous paste's owner is shown. */
export const ANONYMOUS_NAME = 'anonymous';

export const isAnonymous = (p: { owner_id: number }): boolean => p.owner_id === ANONYMOUS_OWNER;

/** ANONYMOUS_RATE_PER_MINUTE, ANONYMOUS_MAX_BYTES and ANONYMOUS_MAX_EXPIRY (config.ts). */
export interface AnonymousRules {
  ratePerMinute: number;
  maxBytes: number;
  maxExpiry: Exclude<Expiry, 'never'>;
}

/** The privacies an anonymous paste may have: a private one would be readable by nobody but admins. */
export const ANONYMOUS_PRIVACIES: readonly string[] = ['public', 'unlisted'];

/** A delete key: 32 base62 characters (190 bits), so a plain SHA-256 of it is what is kept. */
const KEY_RE = /^[A-Za-z0-9]{32}$/;
const DIGEST_RE = /^[0-9a-f]{64}$/;

const digestOf = (key: string): string => hash('sha256', `paste-delete\0${key}`, 'hex');

export class AnonymousDoor {
  readonly #ids = new RandomIds();

  constructor(
    readonly rules: AnonymousRules,
    private readonly limiter: Pick<Limiter, 'consume'>,
  ) {}

  /**
   * Spends one of the client's anonymous creates (keyed like the other per-IP budgets):
   * the one place anonymous pastes use the rate limiter, for the API and the web alike.
   */
  admit(clientKey: string): Maybe<Decision> {
    return this.limiter.consume(`anon:${clientKey}`, this.rules.ratePerMinute);
  }

  /**
   * What an anonymous create may not ask for: more than the longest expiry (`never`
   * included), a private paste, more bytes. An expiry left out is the longest allowed.
   */
  problems(fields: Fields, input: { privacy: string; expiry: Expiry; content: string }): Problem[] {
    const out: Problem[] = [];
    const { maxBytes, maxExpiry } = this.rules;
    if (Buffer.byteLength(input.content) > maxBytes)
      out.push({
        field: 'content',
        message: `content of an anonymous paste is at most ${maxBytes} bytes`,
        tooLarge: true,
      });
    if (!ANONYMOUS_PRIVACIES.includes(input.privacy))
      out.push({ field: 'privacy', message: 'privacy of an anonymous paste must be public or unlisted' });
    if (Object.hasOwn(fields, 'expiry') && longer(input.expiry, maxExpiry))
      out.push({ field: 'expiry', message: `expiry of an anonymous paste is at most ${maxExpiry}` });
    return out;
  }

  /** The expiry an anonymous create gets: the one asked for, else the longest allowed. */
  expiryOf(fields: Fields, asked: Expiry): Expiry {
    return Object.hasOwn(fields, 'expiry') && fields['expiry'] !== '' ? asked : this.rules.maxExpiry;
  }

  /** A new delete key: the secret shown once to the paste's maker, and the digest the paste keeps. */
  newDeleteKey(): { key: string; digest: string } {
    const key = this.#ids.base62(32);
    return { key, digest: digestOf(key) };
  }
}

const longer = (e: Expiry, max: Expiry): boolean => {
  const ms = EXPIRY_MS[e];
  const cap = EXPIRY_MS[max] ?? Number.POSITIVE_INFINITY;
  return ms === null || ms > cap;
};

/** Constant-time: whether a presented delete key is the one whose digest a paste keeps. */
export function deleteKeyMatches(key: string, digest: string | null | undefined): boolean {
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest) || !KEY_RE.test(key)) return false;
  return timingSafeEqual(Buffer.from(digestOf(key), 'latin1'), Buffer.from(digest, 'latin1'));
}

/** Whether a string has the shape of a delete key (a link's part is checked before any lookup). */
export const isDeleteKey = (s: string): boolean => KEY_RE.test(s);
