import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seal, unseal } from '../../src/crypto/seal.ts';

test('a sealed text opens only with the same secret and context, and holds nothing of the text in clear', () => {
  const text = 'pst_abcdefgh_0123456789abcdefghijklmnopqrstuv';
  const sealed = seal('session-id', 'key-1', text);
  assert.equal(sealed.includes(Buffer.from('pst_')), false);
  assert.equal(unseal('session-id', 'key-1', sealed), text);
  assert.equal(unseal('another-session', 'key-1', sealed), null);
  assert.equal(unseal('session-id', 'key-2', sealed), null);
  const altered = Buffer.from(sealed);
  altered[altered.length - 1] = (altered.at(-1) ?? 0) ^ 1;
  assert.equal(unseal('session-id', 'key-1', altered), null);
  assert.equal(unseal('session-id', 'key-1', Buffer.alloc(5)), null);
  assert.notDeepEqual(seal('session-id', 'key-1', text), sealed, 'a fresh IV each time');
});
