import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LARGE_CHARS, ReadBodies } from '../../../src/api/v1/bodies.ts';
import { contentOf, encodeContent, type Paste } from '../../../src/paste/paste.ts';
import { pasteRecord } from '../../helpers/paste-record.ts';

const paste = (hash: string, content: string): Paste => pasteRecord(hash, { content_json: encodeContent(content) });

describe('ReadBodies', () => {
  test('renders a version’s fields once, and a new version (any change) afresh', () => {
    const bodies = new ReadBodies(1 << 20);
    const v1 = paste('a000000000', 'one');
    let builds = 0;
    const render = (_: unknown, p: Paste): string => (builds++, `fields of ${contentOf(p)}`);
    assert.equal(bodies.fields(v1, render, null).text, 'fields of one');
    assert.equal(bodies.fields(v1, render, null).text, 'fields of one');
    assert.equal(builds, 1);
    const v2 = { ...v1, content_json: encodeContent('twö') };
    assert.deepEqual(
      bodies.fields(v2, render, null),
      { text: 'fields of twö', bytes: 14, contentBytes: 6 },
      'a stale rendering is never served; sizes in UTF-8 bytes',
    );
    assert.deepEqual(bodies.fields(v1, render, null), { text: 'fields of one', bytes: 13, contentBytes: 5 });
    assert.equal(builds, 2);
  });

  test('keeps a large text’s bytes per version and per form, counting them and the text they keep alive', () => {
    const bodies = new ReadBodies(1 << 20);
    const big = 'x'.repeat(LARGE_CHARS);
    const v1 = paste('a000000000', big);
    let encodes = 0;
    const enc = (s: string) => () => (encodes++, Buffer.from(s));
    const json = bodies.encoded(v1, 'json', enc(v1.content_json));
    assert.equal(bodies.encoded(v1, 'json', enc(v1.content_json)), json);
    assert.equal(encodes, 1);
    bodies.encoded(v1, 'utf8', enc(big));
    assert.equal(encodes, 2, 'each form is its own entry');
    assert.equal(bodies.bytes, (big.length + 2) * 2 + big.length + big.length + 2);
    const v2 = { ...v1, content_json: encodeContent(`${big}!`) };
    assert.equal(
      bodies.encoded(v2, 'utf8', enc(`${big}!`)).toString(),
      `${big}!`,
      'the new version, not the old bytes',
    );
    assert.equal(encodes, 3);
  });

  test('stays within its bound, least recently used out first, and keeps nothing larger than half of it', () => {
    const text = 'y'.repeat(1000);
    const cost = 2 * (text.length + 2);
    const bodies = new ReadBodies(3 * cost);
    const ps = ['a', 'b', 'c', 'd'].map((k) => paste(`${k}000000000`, text));
    for (const p of ps.slice(0, 3)) bodies.encoded(p, 'json', () => Buffer.from(p.content_json));
    bodies.encoded(ps[0] as Paste, 'json', () => assert.fail('a is still kept'));
    bodies.encoded(ps[3] as Paste, 'json', () => Buffer.from((ps[3] as Paste).content_json));
    assert.equal(bodies.bytes, 3 * cost);
    let rebuilt = false;
    bodies.encoded(ps[1] as Paste, 'json', () => ((rebuilt = true), Buffer.from('')));
    assert.ok(rebuilt, 'b, the least recently used, went first');
    const huge = paste('h000000000', 'z'.repeat(3 * cost));
    bodies.encoded(huge, 'json', () => Buffer.from(huge.content_json));
    assert.ok(bodies.bytes <= 3 * cost);
  });
});
