/**
 * The one error type handlers throw. The code decides the status through a single
 * table, so a `not_found` can never go out as 400 by accident.
 */
export const STATUS_BY_CODE = {
  bad_request: 400,
  unauthorized: 401,
  password_required: 401,
  token_expired: 401,
  account_disabled: 401,
  forbidden: 403,
  cross_site: 403,
  invalid_password: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  /** A user's files past USER_QUOTA_BYTES (README, Files). */
  quota_exceeded: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  /** Not sent (nobody is listening): how the log records a client that left mid-request (nginx's 499). */
  client_closed: 499,
  internal: 500,
  paste_damaged: 500,
  unavailable: 503,
  storage_unavailable: 503,
  outcome_unknown: 503,
  storage_full: 507,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra envelope keys (e.g. `limit_per_minute`) and response headers. */
    readonly extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = STATUS_BY_CODE[code];
  }
}

export const badRequest = (message: string): HttpError => new HttpError('bad_request', message);
export const notFound = (message = 'Paste not found'): HttpError => new HttpError('not_found', message);
