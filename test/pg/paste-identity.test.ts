import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Paste } from '../../src/paste/paste.ts';
import { PasteIdentity } from '../../src/pg/paste-identity.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

const paste = (hash: string, fields: Partial<Paste> = {}): Paste =>
  pasteRecord(hash, {
    title: 't',
    content_json: JSON.stringify('x'.repeat(100)),
    highlight: 0,
    created_at: 1,
    updated_at: 1,
    ...fields,
  });

test('a row read again unchanged is the object read before; any change is a new object', () => {
  const ids = new PasteIdentity(1_000_000);
  const first = ids.of(paste('AAAAAAAAAA'));
  assert.equal(ids.of(paste('AAAAAAAAAA')), first);
  for (const change of [
    { view_count: 1 },
    { content_json: '"y"' },
    { burned: true },
    { receipt: { at: 1, via: 'web' as const, token_id: null } },
    { revision: 2 },
    { title: 'u' },
  ]) {
    const changed = ids.of(paste('AAAAAAAAAA', change));
    assert.notEqual(changed, first, JSON.stringify(change));
    assert.equal(changed.title, change.title ?? 't');
    assert.equal(ids.of(paste('AAAAAAAAAA', change)), changed, 'and that one is kept in turn');
  }
});

test('objects are kept within the byte budget, least recently read out first', () => {
  const ids = new PasteIdentity(1_200);
  const a = ids.of(paste('AAAAAAAAAA'));
  const b = ids.of(paste('BBBBBBBBBB'));
  assert.equal(ids.of(paste('AAAAAAAAAA')), a, 'A read again: B is now the oldest');
  ids.of(paste('CCCCCCCCCC'));
  assert.equal(ids.of(paste('AAAAAAAAAA')), a);
  assert.notEqual(ids.of(paste('BBBBBBBBBB')), b, 'B was let go');
  const huge = paste('DDDDDDDDDD', { content_json: JSON.stringify('z'.repeat(5_000)) });
  assert.equal(ids.of(huge), huge);
  assert.notEqual(ids.of({ ...huge }), huge, 'one larger than the budget is not kept');
});
