import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { csrfMatches, isCsrfToken, newCsrfToken } from '../../src/auth/csrf.ts';
import { parseCookies, serializeCookie } from '../../src/http/cookies.ts';

const withCookie = (cookie?: string): IncomingMessage => ({ headers: cookie === undefined ? {} : { cookie } }) as IncomingMessage;

describe('cookies', () => {
  test('parseCookies reads pairs, strips quotes, skips junk, keeps the first of a name', () => {
    const m = parseCookies(withCookie('a=1; b="two"; junk; =x; a=3; c='));
    assert.deepEqual([...m], [['a', '1'], ['b', 'two'], ['c', '']]);
    assert.equal(parseCookies(withCookie()).size, 0);
  });

  test('serializeCookie writes the attributes and refuses what would need quoting', () => {
    assert.equal(serializeCookie('s', 'v'), 's=v; Path=/');
    assert.equal(serializeCookie('s', 'v', { maxAge: 1.9, httpOnly: true, secure: true, sameSite: 'Strict' }), 's=v; Path=/; Max-Age=1; HttpOnly; Secure; SameSite=Strict');
    assert.throws(() => serializeCookie('a b', 'v'), TypeError);
    assert.throws(() => serializeCookie('a', 'v; Domain=evil'), TypeError);
  });
});

describe('CSRF tokens', () => {
  test('match only themselves, in constant time, and only when well-formed', () => {
    const t = newCsrfToken();
    assert.ok(isCsrfToken(t));
    assert.ok(csrfMatches(t, t));
    assert.ok(!csrfMatches(t, newCsrfToken()));
    assert.ok(!csrfMatches('', ''));
    assert.ok(!csrfMatches('short', 'short'));
  });
});
