import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  base36,
  contentOf,
  encodeContent,
  etagOf,
  isTombstone,
  NO_CONTENT,
  type Paste,
} from '../../src/paste/paste.ts';
import { fileText, parseFile } from '../../src/store/paste-record.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

const TRICKY = '"q" \\ é ✓ 😀\n\t\u0000 </script> \u2028';

const paste = (content: string): Paste =>
  pasteRecord('a000000000', {
    title: 'T',
    content_json: encodeContent(content),
    created_at: 5,
    updated_at: 6,
    view_count: 7,
  });

describe('a paste record', () => {
  test('holds its text once, as the JSON literal, and decodes it exactly', () => {
    const p = paste(TRICKY);
    assert.equal(p.content_json, JSON.stringify(TRICKY));
    assert.equal(contentOf(p), TRICKY);
  });

  test('is written as the file format every version has read: `content` as text, no in-memory field', () => {
    const p = paste(TRICKY);
    const onDisk = JSON.parse(fileText(p)) as Record<string, unknown>;
    const { content_json: _, ...fields } = p;
    assert.deepEqual(onDisk, { ...fields, content: TRICKY });
    assert.deepEqual(parseFile(fileText(p)), p, 'round trip');
    const burned: Paste = {
      ...p,
      content_json: NO_CONTENT,
      burned: true,
      receipt: { at: 9, via: 'api', token_id: 'Tok12345' },
    };
    assert.deepEqual(parseFile(fileText(burned)), burned, 'a receipt too');
  });

  test('reads a file whose content stands among the other fields (as older versions wrote it)', () => {
    const old =
      '{"v":1,"hash":"a000000000","title":"T","content":"x\\ny","language":"text","privacy":"public","highlight":1,"burn_after_read":0,"burned":false,"password":null,"owner_id":1,"created_at":5,"updated_at":6,"expire_at":null,"view_count":7}';
    assert.deepEqual(parseFile(old), paste('x\ny'), 'older files have no receipt (null) and are revision 1');
  });

  test('is a tombstone exactly when its text is gone', () => {
    assert.equal(isTombstone(paste('x')), false);
    assert.equal(isTombstone({ ...paste('x'), content_json: NO_CONTENT }), true);
  });
});

test('base36 writes the digits toString(36) writes, for every number', () => {
  for (const n of [
    0,
    1,
    35,
    36,
    2_176_782_335,
    2_176_782_336,
    2_176_782_337,
    1_764_000_000_000,
    Number.MAX_SAFE_INTEGER,
    -5,
    1.5,
    Number.NaN,
  ]) {
    assert.equal(base36(n), n.toString(36), String(n));
  }
  fc.assert(
    fc.property(fc.maxSafeNat(), (n) => base36(n) === n.toString(36)),
    { numRuns: 5_000 },
  );
  fc.assert(
    fc.property(fc.double(), (n) => base36(n) === n.toString(36)),
    { numRuns: 1_000 },
  );
});

test("a paste's ETag is its hash and the base-36 time of its last edit, quoted", () => {
  assert.equal(
    etagOf({ hash: 'AbCdEfGhIj', updated_at: 1_764_000_000_123 }),
    `"AbCdEfGhIj.${(1_764_000_000_123).toString(36)}"`,
  );
});
