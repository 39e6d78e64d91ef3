import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodingOf, ownedUtf8Bytes, utf8Bytes } from '../../src/http/text-bytes.ts';

/** Any UTF-16 code units, lone surrogates included, weighted towards ASCII. */
const units = fc.string({
  unit: fc
    .oneof(
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 0x7f }) },
      { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xffff }) },
    )
    .map((c) => String.fromCharCode(c)),
  maxLength: 300,
});
const text = fc.oneof(units, fc.string({ unit: 'binary', maxLength: 300 }));

test('encodingOf: Latin-1 exactly for ASCII text, which it writes as the same bytes as UTF-8', () => {
  assert.equal(encodingOf(''), 'latin1');
  assert.equal(encodingOf('plain ASCII {"a":1}\n\u0000\u007f'), 'latin1');
  for (const not of ['é', '\u0080', '\u00ff', '✓', '𝄞', '\ud800', 'a\udc00b'])
    assert.equal(encodingOf(`abc${not}`), 'utf8', not);
  fc.assert(
    fc.property(text, (s) => {
      const ascii = [...s].every((c) => c.charCodeAt(0) < 0x80);
      assert.equal(encodingOf(s), ascii ? 'latin1' : 'utf8');
      assert.deepEqual(Buffer.from(s, encodingOf(s)), Buffer.from(s, 'utf8'));
    }),
    { numRuns: 3_000 },
  );
});

test('utf8Bytes and ownedUtf8Bytes make the bytes Buffer.from makes; owned ones are in memory of their own', () => {
  fc.assert(
    fc.property(text, (s) => {
      const want = Buffer.from(s);
      assert.deepEqual(utf8Bytes(s), want);
      const owned = ownedUtf8Bytes(s);
      assert.deepEqual(owned, want);
      // Not a slice of Node's shared pool: the whole allocation is these bytes.
      assert.equal(owned.byteOffset, 0);
      assert.equal(owned.buffer.byteLength, want.length);
    }),
    { numRuns: 2_000 },
  );
});
