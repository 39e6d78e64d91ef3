import { HttpError } from '../http/errors.ts';
import type { AccountStore, TokenRecord, User } from '../store/accounts.ts';
import { hashToken, newTokenSecret, SCOPES, type Scope } from './tokens.ts';

export const TOKEN_LABEL_MAX = 100;
/** Keeps the shared accounts file small; nobody needs more live tokens than this. */
export const TOKENS_PER_USER_MAX = 50;
/** The CLI's bound for `--rate` (nine digits). */
export const RATE_MAX = 999_999_999;

/** The scopes a user's tokens may carry: `admin` only for users with the admin role. */
export const allowedScopes = (user: User): readonly Scope[] => (user.role === 'admin' ? SCOPES : SCOPES.filter((s) => s !== 'admin'));

export interface TokenSettings {
  label: string;
  scopes: Scope[];
  rate: number;
}

/**
 * Creates a token exactly as `token create` does (CONTRACT §2) and returns the secret,
 * which exists only in this return value: the store keeps its SHA-256.
 */
export async function createToken(accounts: AccountStore, userId: number, s: TokenSettings, now: number): Promise<{ record: TokenRecord; secret: string }> {
  const { id, secret } = newTokenSecret();
  const record = await accounts.mutate((doc) => {
    const user = doc.users.find((u) => u.id === userId);
    if (user === undefined) throw new HttpError('forbidden', 'Your account no longer exists.');
    if (s.scopes.some((sc) => !allowedScopes(user).includes(sc))) throw new HttpError('forbidden', 'Only admins may hold the admin scope.');
    if (doc.tokens.filter((t) => t.user_id === userId).length >= TOKENS_PER_USER_MAX) {
      throw new HttpError('bad_request', `You already have ${TOKENS_PER_USER_MAX} tokens; revoke one first.`);
    }
    const r: TokenRecord = { id, user_id: userId, label: s.label, scopes: s.scopes, rate_limit_per_minute: s.rate, hash: hashToken(secret), created_at: now };
    doc.tokens.push(r);
    return r;
  });
  return { record, secret };
}

/** Revokes one of the user's own tokens; someone else's looks like a missing one. */
export async function revokeOwnToken(accounts: AccountStore, userId: number, tokenId: string): Promise<void> {
  await accounts.mutate((doc) => {
    const i = doc.tokens.findIndex((t) => t.id === tokenId && t.user_id === userId);
    if (i === -1) throw new HttpError('not_found', 'There is no such token.');
    doc.tokens.splice(i, 1);
  });
}

/** An admin's change of a token's scopes and rate limit (SPEC §1, "API Tokens"). */
export async function updateToken(accounts: AccountStore, tokenId: string, scopes: Scope[], rate: number): Promise<TokenRecord> {
  return accounts.mutate((doc) => {
    const t = doc.tokens.find((x) => x.id === tokenId);
    if (t === undefined) throw new HttpError('not_found', 'There is no such token.');
    const owner = doc.users.find((u) => u.id === t.user_id);
    if (owner === undefined || scopes.some((sc) => !allowedScopes(owner).includes(sc))) {
      throw new HttpError('bad_request', 'The admin scope can only be given to a token of an admin user.');
    }
    t.scopes = scopes;
    t.rate_limit_per_minute = rate;
    return t;
  });
}
