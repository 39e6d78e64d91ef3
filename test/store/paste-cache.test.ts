import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Paste } from '../../src/paste/paste.ts';
import { contentJson, ENTRY_OVERHEAD as O, PasteCache } from '../../src/store/paste-cache.ts';

const paste = (hash: string, content: string): Paste => ({
  v: 1, hash, title: '', content, language: 'text', privacy: 'public', highlight: 1, burn_after_read: 0, burned: false,
  password: null, owner_id: 1, created_at: 0, updated_at: 0, expire_at: null, view_count: 0,
});

describe('PasteCache', () => {
  test('evicts the least recently used entries past its byte bound', () => {
    const cache = new PasteCache(4 * (O + 102));
    for (const k of ['a', 'b', 'c', 'd']) cache.set(k, paste(`${k}000000000`, 'x'.repeat(100)));
    cache.get('a');
    cache.set('e', paste('e000000000', 'x'.repeat(100)));
    assert.equal(cache.get('b'), undefined);
    assert.ok(cache.get('a') && cache.get('c') && cache.get('d') && cache.get('e'));
    assert.equal(cache.bytes, 4 * (O + 102), 'each costs its content as JSON (with quotes) and the overhead');
  });

  test('an entry read between inserts survives any number of them; unread ones leave oldest first', () => {
    const cache = new PasteCache(4 * (O + 102));
    for (const k of ['a', 'b', 'c', 'd']) cache.set(k, paste(`${k}000000000`, 'x'.repeat(100)));
    for (let i = 0; i < 20; i++) {
      assert.ok(cache.get('a'), `a is still cached before insert ${i}`);
      cache.set(`n${i}`, paste(`n${String(i).padStart(9, '0')}`, 'x'.repeat(100)));
      assert.equal(cache.size, 4);
    }
    assert.ok(cache.get('n19') && cache.get('n18') && cache.get('n17'));
    assert.equal(cache.get('n16'), undefined);
    assert.equal(cache.get('b'), undefined);
  });

  test('counts non-Latin-1 text at two bytes a character', () => {
    const cache = new PasteCache(1 << 20);
    cache.set('a', paste('a000000000', 'é'.repeat(100)));
    cache.set('b', paste('b000000000', '✓'.repeat(100)));
    assert.equal(cache.bytes, O + 102 + O + 204);
  });

  test('keeps a rendering only for the cached object, and drops it when the paste is replaced', () => {
    const cache = new PasteCache(1 << 20);
    const v1 = cache.set('a', paste('a000000000', 'one'));
    let builds = 0;
    const build = (p: Paste) => () => (builds++, Buffer.from(p.content));
    assert.equal(cache.render('a', v1, 'raw', build(v1)).toString(), 'one');
    assert.equal(cache.render('a', v1, 'raw', build(v1)).toString(), 'one');
    assert.equal(builds, 1);
    assert.equal(cache.bytes, O + 5 + 3);
    const v2 = cache.set('a', paste('a000000000', 'two'));
    assert.equal(cache.render('a', v2, 'raw', build(v2)).toString(), 'two');
    assert.equal(cache.render('a', v1, 'raw', build(v1)).toString(), 'one', 'a stale object is rendered afresh, not from the cache');
    assert.equal(builds, 3);
    cache.delete('a');
    assert.equal(cache.bytes, 0);
    cache.render('a', v2, 'raw', build(v2));
    assert.equal(cache.bytes, 0, 'nothing is kept for an uncached paste');
  });

  test('counts a rendering kept as a string like any text, and one kept as bytes by its length', () => {
    const cache = new PasteCache(1 << 20);
    const p = cache.set('a', paste('a000000000', 'x'));
    assert.equal(cache.render('a', p, 'latin', () => 'é'.repeat(10)), 'é'.repeat(10));
    assert.equal(cache.bytes, O + 3 + 10);
    cache.render('a', p, 'wide', () => '✓'.repeat(10));
    assert.equal(cache.bytes, O + 3 + 10 + 20);
    cache.render('a', p, 'bytes', () => Buffer.from('✓'.repeat(10)));
    assert.equal(cache.bytes, O + 3 + 10 + 20 + 30);
    cache.delete('a');
    assert.equal(cache.bytes, 0);
  });

  test('keeps a paste whole: its content decodes from the JSON it holds, and copies of it are plain pastes', () => {
    const cache = new PasteCache(1 << 20);
    const text = '"q" \\ é ✓ 😀\n\t\u0000 </script>';
    const original = paste('a000000000', text);
    const kept = cache.set('a', original);
    assert.equal(cache.get('a'), kept);
    assert.equal(kept.content, text);
    assert.equal(contentJson(kept), JSON.stringify(text));
    assert.deepEqual({ ...kept }, original, 'a spread copies every field, content included');
    assert.deepEqual(JSON.parse(JSON.stringify(kept)), original, 'JSON.stringify writes every field');
    assert.equal(contentJson({ ...kept, content: 'new' }), '"new"', 'a copy with other content is encoded afresh');
    assert.throws(() => {
      (kept as { content: string }).content = 'changed';
    }, TypeError);
  });

  test('does not keep a paste larger than a quarter of the bound', () => {
    const cache = new PasteCache(4000);
    cache.set('a', paste('a000000000', 'x'.repeat(1000)));
    assert.equal(cache.get('a'), undefined);
  });
});
