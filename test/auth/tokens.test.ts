import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { hashToken, sameSecret, secretBytes, tokenIdOf, tokenMatches } from '../../src/auth/tokens.ts';

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
  assert.deepEqual(
    [
      tokenMatches(SECRET, other),
      tokenMatches(SECRET, stored),
      tokenMatches(`${SECRET}2`, stored),
      tokenMatches(`${SECRET}2`, other),
    ],
    [false, true, false, true],
  );
});

test('tokenIdOf reads the id of a well-formed secret only', () => {
  assert.equal(tokenIdOf(SECRET), 'AbCd1234');
  assert.equal(tokenIdOf(`${SECRET}x`), null);
  assert.equal(tokenIdOf(`Bearer ${SECRET}`), null);
});

test('secretBytes keeps only what could be one of our secrets: 45 characters, all ASCII', () => {
  const kept = secretBytes(SECRET);
  assert.deepEqual(kept, Buffer.from(SECRET, 'latin1'));
  // In memory of its own, not a slice of Node's shared pool that other buffers keep alive.
  assert.equal(kept?.buffer.byteLength, SECRET.length);
  for (const not of [
    '',
    `${SECRET}x`,
    SECRET.slice(0, -1),
    `${SECRET.slice(0, -1)}\u00e1`,
    `${SECRET.slice(0, -1)}\u0179`,
    `${SECRET.slice(0, -2)}\ud83d\ude00`,
  ]) {
    assert.equal(secretBytes(not), null, not);
  }
});

test('sameSecret is string equality over secrets of our shape, and a character outside ASCII never passes for its low byte', () => {
  const known = secretBytes(SECRET);
  assert.ok(known !== null);
  assert.equal(sameSecret(SECRET, known), true);
  assert.equal(sameSecret(`${SECRET.slice(0, -1)}${String.fromCharCode(0x100 + SECRET.charCodeAt(44))}`, known), false);
  assert.equal(sameSecret(`${SECRET.slice(0, -2)}\u00e1`, known), false);
  // 45 UTF-16 units whose UTF-8 would fill exactly 45 bytes of a shorter buffer: 43 ASCII, then two 2-byte letters.
  assert.equal(sameSecret(`${SECRET.slice(0, 43)}\u00e1\u00e1`, known), false);
  const ascii = fc.string({
    unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)),
    minLength: 45,
    maxLength: 45,
  });
  const any = fc.string({ unit: 'binary', minLength: 40, maxLength: 50 });
  // Near misses: one unit of the secret replaced by any other (ASCII or not, a surrogate half included).
  const nearMiss = fc
    .tuple(ascii, fc.nat(44), fc.integer({ min: 0, max: 0xffff }))
    .map(([a, i, c]) => [a, `${a.slice(0, i)}${String.fromCharCode(c)}${a.slice(i + 1)}`] as const);
  fc.assert(
    fc.property(nearMiss, ([a, b]) => {
      const bytes = secretBytes(a);
      assert.ok(bytes !== null);
      assert.equal(sameSecret(b, bytes), a === b);
    }),
    { numRuns: 5_000 },
  );
  fc.assert(
    fc.property(ascii, fc.oneof(ascii, any), (a, b) => {
      const bytes = secretBytes(a);
      assert.ok(bytes !== null);
      assert.equal(sameSecret(b, bytes), a === b);
      // The buffer it encodes into is reused: the first still matches itself after another was compared.
      assert.equal(sameSecret(a, bytes), true);
    }),
    { numRuns: 5_000 },
  );
});
