import { PasswordChecksBusy } from '../crypto/password-gate.ts';
import { AccountError, AuthError, type AccountFailure, type AuthFailure } from '../auth/errors.ts';
import { HttpError, type ErrorCode } from '../http/errors.ts';
import { PasteError, type PasteFailure } from '../paste/errors.ts';
import { formatTime } from '../paste/paste.ts';
import type { Receipt } from '../paste/paste.ts';
import { OutcomeUnknown, StorageFull, StorageReadOnly, StorageUnavailable } from '../storage/errors.ts';

/** The one table from a domain refusal to the HTTP error code (and so the status) both sides answer with. */
const PASTE_CODES: Record<PasteFailure, ErrorCode> = {
  not_found: 'not_found',
  expired: 'gone',
  burned: 'gone',
  password_required: 'password_required',
  wrong_password: 'invalid_password',
  too_many_guesses: 'rate_limited',
  too_many_misses: 'rate_limited',
  not_owner: 'forbidden',
  changed: 'precondition_failed',
  damaged: 'paste_damaged',
  no_revision: 'not_found',
  one_time: 'forbidden',
  envelope_required: 'bad_request',
  encryption_needs_content: 'bad_request',
  too_many_searches: 'rate_limited',
  searches_busy: 'unavailable',
  too_many_files: 'bad_request',
  file_too_large: 'payload_too_large',
  file_name_taken: 'bad_request',
  no_such_file: 'bad_request',
  file_not_found: 'not_found',
  grant_refused: 'forbidden',
  quota_exceeded: 'quota_exceeded',
  nothing_left: 'bad_request',
};

const ACCOUNT_CODES: Record<AccountFailure, ErrorCode> = {
  invalid_name: 'bad_request',
  no_such_user: 'forbidden',
  name_taken: 'bad_request',
  registration_closed: 'forbidden',
  scope_not_allowed: 'forbidden',
  too_many_tokens: 'bad_request',
  no_such_token: 'not_found',
  last_admin: 'conflict',
  linked_elsewhere: 'forbidden',
};

const AUTH_CODES: Record<AuthFailure, ErrorCode> = {
  token_required: 'unauthorized',
  token_invalid: 'unauthorized',
  token_expired: 'token_expired',
  account_disabled: 'account_disabled',
  too_many_failures: 'rate_limited',
};

/** A 429's extras: the limit in the body (README, Rate limits) and `Retry-After` (README, Rate limits). */
const limited = (limit: { perMinute: number; retryAfterSec: number } | undefined): HttpError['extra'] =>
  limit === undefined
    ? {}
    : { body: { limit_per_minute: limit.perMinute }, headers: { 'retry-after': String(limit.retryAfterSec) } };

/** A burn receipt as the API shows it (README, Burn receipts). */
const receiptJson = (r: Receipt): Record<string, unknown> => ({
  read_at: formatTime(r.at),
  via: r.via,
  token_id: r.token_id,
});

/**
 * The HTTP error for whatever a step threw. Domain refusals keep their message and get
 * their status from the tables above; anything else is a fault, reported to `logError`
 * in full and answered with `internalMessage` only.
 */
export function toHttpError(err: unknown, logError: (err: unknown) => void, internalMessage: string): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof PasteError) {
    // A search refused for others running ends within a second (paste/service.ts, OWNED_SEARCH_MS).
    if (err.kind === 'too_many_searches' || err.kind === 'searches_busy')
      return new HttpError(PASTE_CODES[err.kind], err.message, { headers: { 'retry-after': '1' } });
    if (err.receipt !== undefined)
      return new HttpError(PASTE_CODES[err.kind], err.message, { body: { receipt: receiptJson(err.receipt) } });
    return new HttpError(PASTE_CODES[err.kind], err.message, limited(err.limit));
  }
  if (err instanceof AuthError) return new HttpError(AUTH_CODES[err.kind], err.message, limited(err.limit));
  if (err instanceof AccountError) return new HttpError(ACCOUNT_CODES[err.kind], err.message);
  // The disk refused a write: nothing was changed, and the store has told the server's log.
  if (err instanceof StorageFull)
    return new HttpError('storage_full', "The server's disk is full, so nothing was saved. Try again later.");
  if (err instanceof StorageReadOnly)
    return new HttpError('unavailable', "The server's data folder cannot be written to, so nothing was saved.");
  // The database did not answer in time: the request may be tried again (README, Running on PostgreSQL).
  if (err instanceof StorageUnavailable)
    return new HttpError(err instanceof OutcomeUnknown ? 'outcome_unknown' : 'storage_unavailable', err.message, {
      headers: { 'retry-after': String(err.retryAfterSec) },
    });
  // More password checks waiting than the gate queues: refused before any work, so nothing was changed.
  if (err instanceof PasswordChecksBusy)
    return new HttpError('unavailable', err.message, { headers: { 'retry-after': String(err.retryAfterSec) } });
  logError(err);
  return new HttpError('internal', internalMessage);
}

/** The status a domain refusal answers with, for pages that show it inside a form. */
export const statusOf = (err: PasteError | AccountError | AuthError): number =>
  toHttpError(err, () => undefined, '').status;
