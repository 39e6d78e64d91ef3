import type { Viewer } from '../paste/access.ts';
import type { Scope, User } from './records.ts';
import { hasScope } from './tokens.ts';

/** The authenticated caller of an API request. */
export interface Principal {
  tokenId: string;
  userId: number;
  scopes: readonly Scope[];
  rateLimit: number;
  /** The token's own limits (README, Web pages: API Tokens): largest content, allowed privacies; null: none. */
  maxPasteBytes: number | null;
  privacies: readonly string[] | null;
  /** A create without a token, let through by ANONYMOUS_PASTES (README, Anonymous pastes). */
  anonymous?: true;
}

/*
 * The one rule for who counts as an admin: on the web, a user with the admin role; on the
 * API, a token that carries the admin scope (only an admin's tokens may).
 */

/** The viewer behind an API token. */
export const tokenViewer = (p: Principal): Viewer => ({ userId: p.userId, isAdmin: hasScope(p.scopes, 'admin') });

/** The viewer behind a web session. */
export const userViewer = (u: User): Viewer => ({ userId: u.id, isAdmin: u.role === 'admin' });
