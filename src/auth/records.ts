import type { PasswordHash } from '../crypto/passwords.ts';
import type { Privacy } from '../paste/paste.ts';

/**
 * Users and API tokens as the rules speak of them and every store (store/, pg/) keeps
 * them: the records of the accounts seam (auth/accounts.ts, AccountRecords).
 */

/** What a token may do: `admin` passes every check (README, API). */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface User {
  id: number;
  name: string;
  role: 'admin' | 'user';
  password: PasswordHash | null;
  created_at: number;
  /** A disabled user's tokens answer 401 and its sessions end (README, Users). Always present from data format 2. */
  disabled?: boolean;
  /** The last successful web login (epoch ms); null: never. Always present from data format 2. */
  last_login_at?: number | null;
  /** The password was handed out by an admin: the web asks for a new one before anything else. Absent: false. */
  password_temporary?: boolean;
  /**
   * The OpenID provider's user this account is linked to (its issuer and `sub`), set at the
   * first sign-in there (README, Sign-in with OpenID Connect). Absent: not linked.
   */
  oidc_issuer?: string;
  oidc_subject?: string;
}

export interface TokenRecord {
  id: string;
  user_id: number;
  label: string;
  scopes: Scope[];
  rate_limit_per_minute: number;
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  hash: string;
  created_at: number;
  /** When it stops working (epoch ms); absent or null: never (README, Command line). */
  expires_at?: number | null;
  /** The largest paste content this token may send, in bytes; absent or null: the server's limit. */
  max_paste_bytes?: number | null;
  /** The privacies its pastes may have; absent or null: any (README, Web pages: API Tokens). */
  privacies?: Privacy[] | null;
}

export interface AccountsDoc {
  version: 1;
  next_user_id: number;
  users: User[];
  tokens: TokenRecord[];
  /** Ids of revoked tokens (the latest 1,000), so a request still using one is logged with its id. */
  revoked_tokens?: string[];
}

/** User names are unique ignoring case: `Alice` and `alice` are the same account. */
export const findUserByName = (users: readonly User[], name: string): User | undefined => {
  const key = name.toLowerCase();
  return users.find((u) => u.name.toLowerCase() === key);
};
