import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { hashToken, tokenIdOf, tokenMatches } from '../../src/auth/tokens.ts';

const SECRET = `pst_AbCd1234_${'x'.repeat(31)}y`;

test('a token hash is the SHA-256 of the whole secret, in lower-case hex', () => {
  assert.equal(hashToken(SECRET), createHash('sha256').update(SECRET).digest('hex'));
  assert.match(hashToken(SECRET), /^[0-9a-f]{64}$/);
});

test('tokenMatches accepts the secret its hash was made from, and nothing else', () => {
  const stored = hashToken(SECRET);
  assert.equal(tokenMatches(SECRET, stored), true);
  assert.equal(tokenMatches(`${SECRET.slice(0, -1)}z`, stored), false);
  assert.equal(tokenMatches('', stored), false);
  // A stored hash differing in its last digit, cut short, or too long never matches.
  const last = stored.at(-1) === '0' ? '1' : '0';
  assert.equal(tokenMatches(SECRET, stored.slice(0, -1) + last), false);
  assert.equal(tokenMatches(SECRET, stored.slice(0, -2)), false);
  assert.equal(tokenMatches(SECRET, `${stored}00`), false);
  assert.equal(tokenMatches(SECRET, ''), false);
  // Only a lower-case hex digest is a stored hash: nothing else matches, whatever its bytes.
  assert.equal(tokenMatches(SECRET, stored.toUpperCase()), stored === stored.toUpperCase());
  assert.equal(tokenMatches(SECRET, stored.replace(/a/g, '\u0161')), !stored.includes('a'));
  // The buffers it compares in are reused: a match after a mismatch, and the other way round.
  const other = hashToken(`${SECRET}2`);
  assert.deepEqual([tokenMatches(SECRET, other), tokenMatches(SECRET, stored), tokenMatches(`${SECRET}2`, stored), tokenMatches(`${SECRET}2`, other)], [false, true, false, true]);
});

test('tokenIdOf reads the id of a well-formed secret only', () => {
  assert.equal(tokenIdOf(SECRET), 'AbCd1234');
  assert.equal(tokenIdOf(`${SECRET}x`), null);
  assert.equal(tokenIdOf(`Bearer ${SECRET}`), null);
});
