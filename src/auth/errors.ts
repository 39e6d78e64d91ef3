/**
 * Refusals of the accounts service, by kind. The sides turn a kind into a status once
 * (pipeline/refusal.ts); nothing branches on the message, which is for people.
 */
export type AccountFailure =
  /** The user a change names does not exist (any more). */
  | 'no_such_user'
  | 'invalid_name'
  | 'name_taken'
  | 'registration_closed'
  /** A scope the token's user may not hold (admin for a non-admin). */
  | 'scope_not_allowed'
  | 'too_many_tokens'
  | 'no_such_token'
  /** Disabling or demoting the only enabled admin would leave nobody to administer. */
  | 'last_admin'
  /** The account is linked to another user of the OpenID provider, or that user to another account. */
  | 'linked_elsewhere';

export class AccountError extends Error {
  constructor(
    readonly kind: AccountFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Why an API request was not authenticated. */
export type AuthFailure =
  | 'token_required'
  | 'token_invalid'
  | 'token_expired'
  | 'account_disabled'
  | 'too_many_failures';

export class AuthError extends Error {
  constructor(
    readonly kind: AuthFailure,
    message: string,
    /** For too_many_failures: the budget's limit and when it can pay again. */
    readonly limit?: { perMinute: number; retryAfterSec: number },
    /** The id of the token presented, when it is (or was) one of ours: for the log, never the secret. */
    readonly tokenId?: string,
  ) {
    super(message);
  }
}
