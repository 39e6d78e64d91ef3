import type { IncomingMessage } from 'node:http';
import type { AppDeps } from '../deps.ts';
import { HttpError } from '../http/errors.ts';
import { tokenIdOf, tokenMatches, type Scope } from './tokens.ts';

/** The authenticated caller of an API request. */
export interface Principal {
  tokenId: string;
  userId: number;
  scopes: readonly Scope[];
  rateLimit: number;
}

/**
 * The token from the `Authorization: Bearer` header, else the `token` query parameter given
 * (SPEC §5.2; the form field is the pipeline's business). A malformed Authorization header
 * yields '' rather than falling through, so it fails loudly instead of being ignored.
 */
export function findToken(req: IncomingMessage, queryToken: string | null): string | null {
  const header = req.headers.authorization;
  if (header !== undefined) return /^Bearer +([^\s]+) *$/i.exec(header)?.[1] ?? '';
  return queryToken;
}

/**
 * Checks a presented secret against the accounts as they are now: the caller awaits
 * `accounts.fresh()` first. Failures spend the client IP's failed-auth budget; once it is
 * spent every attempt from that IP gets 429, a valid token included, so a guesser learns
 * nothing from the answers until the budget refills.
 */
export function authenticate(deps: AppDeps, secret: string | null, ip: string): Principal {
  const failLimit = deps.config.authFailLimitPerMinute;
  const ipKey = `authfail:${ip}`;
  if (failLimit > 0) {
    const budget = deps.limiter.peek(ipKey, failLimit);
    if (!budget.allowed) throw tooManyFailures(failLimit, budget.retryAfterSec);
  }
  const id = secret === null ? null : tokenIdOf(secret);
  const record = id === null ? undefined : deps.accounts.token(id);
  const user = record === undefined ? undefined : deps.accounts.user(record.user_id);
  if (secret === null || secret === '' || record === undefined || user === undefined || !tokenMatches(secret, record.hash)) {
    if (failLimit > 0) {
      const d = deps.limiter.consume(ipKey, failLimit);
      if (!d.allowed) throw tooManyFailures(failLimit, d.retryAfterSec);
    }
    throw new HttpError('unauthorized', secret === null || secret === '' ? 'API token required' : 'Invalid or revoked API token');
  }
  deps.tokenUsage.touch(record.id, deps.now());
  return { tokenId: record.id, userId: user.id, scopes: record.scopes, rateLimit: record.rate_limit_per_minute };
}

const tooManyFailures = (limit: number, retryAfterSec: number): HttpError =>
  new HttpError('rate_limited', 'Too many failed authentication attempts from this address; try again later', {
    body: { limit_per_minute: limit },
    headers: { 'retry-after': String(Math.max(1, retryAfterSec)) },
  });
