import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AccountError, AuthError, type AccountFailure, type AuthFailure } from '../../src/auth/errors.ts';
import { HttpError } from '../../src/http/errors.ts';
import { PasteError, type PasteFailure } from '../../src/paste/errors.ts';
import { statusOf, toHttpError } from '../../src/pipeline/refusal.ts';

const never = (err: unknown): void => assert.fail(`not a fault: ${String(err)}`);

describe('domain refusals become HTTP errors in one table', () => {
  const paste: [PasteFailure, number, string][] = [
    ['not_found', 404, 'not_found'],
    ['expired', 410, 'gone'],
    ['burned', 410, 'gone'],
    ['password_required', 401, 'password_required'],
    ['wrong_password', 403, 'invalid_password'],
    ['too_many_guesses', 429, 'rate_limited'],
    ['not_owner', 403, 'forbidden'],
  ];
  for (const [kind, status, code] of paste) {
    test(`paste ${kind} → ${status} ${code}, its message kept`, () => {
      const err = new PasteError(kind);
      const e = toHttpError(err, never, 'x');
      assert.deepEqual([e.status, e.code, e.message], [status, code, err.message]);
    });
  }
  test('the paste messages say what the README promises', () => {
    assert.match(new PasteError('expired').message, /expired/);
    assert.match(new PasteError('burned').message, /burned/);
    assert.equal(new PasteError('password_required').message, 'Password required');
    assert.equal(new PasteError('wrong_password').message, 'Invalid password');
  });

  const account: [AccountFailure, number][] = [
    ['invalid_name', 400],
    ['no_such_user', 403],
    ['name_taken', 400],
    ['registration_closed', 403],
    ['scope_not_allowed', 403],
    ['too_many_tokens', 400],
    ['no_such_token', 404],
  ];
  for (const [kind, status] of account) {
    test(`account ${kind} → ${status}`, () => assert.equal(statusOf(new AccountError(kind, 'm')), status));
  }

  const auth: [AuthFailure, number][] = [
    ['token_required', 401],
    ['token_invalid', 401],
    ['too_many_failures', 429],
  ];
  for (const [kind, status] of auth) {
    test(`auth ${kind} → ${status}`, () => assert.equal(statusOf(new AuthError(kind, 'm')), status));
  }

  test('a 429 carries limit_per_minute and Retry-After', () => {
    const e = toHttpError(new PasteError('too_many_guesses', { perMinute: 10, retryAfterSec: 6 }), never, 'x');
    assert.deepEqual(e.extra, { body: { limit_per_minute: 10 }, headers: { 'retry-after': '6' } });
    const a = toHttpError(new AuthError('too_many_failures', 'm', { perMinute: 30, retryAfterSec: 2 }), never, 'x');
    assert.deepEqual(a.extra, { body: { limit_per_minute: 30 }, headers: { 'retry-after': '2' } });
  });

  test('an HttpError passes as it is; anything else is a fault, logged in full and answered generically', () => {
    const h = new HttpError('bad_request', 'no');
    assert.equal(toHttpError(h, never, 'x'), h);
    const logged: unknown[] = [];
    const fault = new TypeError('secret detail');
    const e = toHttpError(fault, (err) => logged.push(err), 'Internal server error');
    assert.deepEqual([e.status, e.code, e.message], [500, 'internal', 'Internal server error']);
    assert.deepEqual(logged, [fault]);
  });
});
