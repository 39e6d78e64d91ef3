import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { Signer } from '../../src/crypto/signature.ts';
import {
  anonCsrfCookie,
  csrfMatches,
  isAnonCsrfToken,
  isCsrfToken,
  newAnonCsrfToken,
  newCsrfToken,
} from '../../src/web/csrf.ts';
import { clearSessionCookie, sessionCookie } from '../../src/web/session-cookies.ts';
import { hostCookieName, parseCookies, serializeCookie } from '../../src/http/cookies.ts';

const withCookie = (cookie?: string): IncomingMessage =>
  ({ headers: cookie === undefined ? {} : { cookie } }) as IncomingMessage;

describe('cookies', () => {
  test('parseCookies reads pairs, strips quotes, skips junk, keeps the first of a name', () => {
    const m = parseCookies(withCookie('a=1; b="two"; junk; =x; a=3; c='));
    assert.deepEqual(
      [...m],
      [
        ['a', '1'],
        ['b', 'two'],
        ['c', ''],
      ],
    );
    assert.equal(parseCookies(withCookie()).size, 0);
  });

  test('serializeCookie writes the attributes and refuses what would need quoting', () => {
    assert.equal(serializeCookie('s', 'v'), 's=v; Path=/');
    assert.equal(
      serializeCookie('s', 'v', { maxAge: 1.9, httpOnly: true, secure: true, sameSite: 'Strict' }),
      's=v; Path=/; Max-Age=1; HttpOnly; Secure; SameSite=Strict',
    );
    assert.throws(() => serializeCookie('a b', 'v'), TypeError);
    assert.throws(() => serializeCookie('a', 'v; Domain=evil'), TypeError);
  });

  test('Secure cookies get the __Host- prefix, which serializeCookie refuses without Secure', () => {
    assert.equal(hostCookieName('x', false), 'x');
    assert.equal(hostCookieName('x', true), '__Host-x');
    assert.throws(() => serializeCookie('__Host-x', 'v', { secure: false }), /must be Secure/);
    assert.match(
      sessionCookie('id', 1000, true),
      /^__Host-paste_sid=id; Path=\/; Max-Age=1; HttpOnly; Secure; SameSite=Lax$/,
    );
    assert.match(clearSessionCookie(true), /^__Host-paste_sid=; Path=\/; Max-Age=0;/);
    assert.match(anonCsrfCookie('t', true), /^__Host-paste_csrf=t; Path=\/;/);
    assert.match(sessionCookie('id', 1000, false), /^paste_sid=id; Path=\/;/);
    for (const c of [sessionCookie('id', 1000, true), anonCsrfCookie('t', true)]) assert.doesNotMatch(c, /Domain=/i);
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
    assert.ok(!csrfMatches(t, `${t.slice(1)}é`), 'same length in characters, not in bytes');
  });

  test('a token is 32 random bytes in base64url, never the same twice (across pool refills)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const t = newCsrfToken();
      assert.match(t, /^[A-Za-z0-9_-]{43}$/);
      assert.ok(isCsrfToken(t));
      seen.add(t);
    }
    assert.equal(seen.size, 1_000);
  });

  test('anonymous tokens are signed with the server key: only issued ones are accepted', () => {
    const key = new Signer(Buffer.alloc(32, 7));
    const t = newAnonCsrfToken(key);
    assert.match(t, /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    assert.notEqual(newAnonCsrfToken(key), t);
    assert.ok(isAnonCsrfToken(key, t));
    assert.ok(csrfMatches(t, t));
    assert.ok(!isAnonCsrfToken(new Signer(Buffer.alloc(32, 8)), t), 'another server’s key');
    assert.ok(!isAnonCsrfToken(key, newCsrfToken()), 'a bare random value');
    assert.ok(!isAnonCsrfToken(key, `${newCsrfToken()}.${t.split('.')[1]}`), 'a signature moved to another nonce');
    assert.ok(!isAnonCsrfToken(key, ''));
  });
});
