import type { Principal } from '../auth/viewer.ts';
import type { Viewer } from '../paste/access.ts';
import { ANONYMOUS_OWNER, ANONYMOUS_PRIVACIES, type AnonymousDoor } from '../paste/anonymous.ts';

/**
 * Who a request that carries no token is, on a route open to it (api/request.ts, `anonymous`).
 */

/** The anonymous caller as the paste rules see it: a user id no paste has, not even an anonymous one. */
export const NOBODY: Viewer = { userId: -1, isAdmin: false };

/** A reader without a token: what the web shows anyone, with no budget of its own, as the web has none. */
export const ANONYMOUS_READER: Principal = {
  tokenId: '',
  userId: -1,
  scopes: ['read'],
  rateLimit: 0,
  maxPasteBytes: null,
  privacies: null,
  anonymous: true,
};

/**
 * A create without a token, with ANONYMOUS_PASTES: no account, the door's size bound,
 * public or unlisted only, and the client's own budget (api/side.ts, rateLimit).
 */
export const anonymousCreator = (door: AnonymousDoor): Principal => ({
  tokenId: '',
  userId: ANONYMOUS_OWNER,
  scopes: ['write'],
  rateLimit: door.rules.ratePerMinute,
  maxPasteBytes: door.rules.maxBytes,
  privacies: ANONYMOUS_PRIVACIES,
  anonymous: true,
});
