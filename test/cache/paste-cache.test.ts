import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ENTRY_OVERHEAD as O, PasteCache } from '../../src/cache/paste-cache.ts';
import { encodeContent, type Paste } from '../../src/paste/paste.ts';
import { pasteRecord } from '../helpers/paste-record.ts';

const paste = (hash: string, content: string): Paste => pasteRecord(hash, { content_json: encodeContent(content) });

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

  test('a recount is kept beside the paste, only grows, and goes with the entry', () => {
    const cache = new PasteCache(8 * (O + 102));
    const a = paste('a000000000', 'x'.repeat(100));
    cache.set('a', a);
    assert.equal(cache.viewCount('a'), 0);
    assert.equal(cache.viewCount('b'), undefined);
    cache.recount('a', 5);
    cache.recount('a', 3);
    cache.recount('b', 9);
    assert.equal(cache.viewCount('a'), 5, 'an older count changes nothing');
    assert.equal(cache.viewCount('b'), undefined, 'nothing is kept for a paste not held');
    assert.equal(cache.get('a'), a, 'the same object, unchanged');
    assert.equal(a.view_count, 0);
    assert.equal(cache.bytes, O + 102);
    cache.set('a', { ...a, title: 'new' });
    assert.equal(cache.viewCount('a'), 0, 'a new version starts from its own count');
    cache.delete('a');
    assert.equal(cache.viewCount('a'), undefined);
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

  test('a paste just added stays even when every older one was read since; the oldest goes', () => {
    const cache = new PasteCache(4 * (O + 102));
    for (const k of ['a', 'b', 'c', 'd']) cache.set(k, paste(`${k}000000000`, 'x'.repeat(100)));
    for (const k of ['a', 'b', 'c', 'd']) assert.ok(cache.get(k));
    const e = paste('e000000000', 'x'.repeat(100));
    cache.set('e', e);
    assert.equal(cache.get('e'), e, 'the new paste was kept');
    assert.equal(cache.get('a'), undefined, 'a, the oldest, went');
    assert.ok(cache.get('b') && cache.get('c') && cache.get('d'));
  });

  test('counts non-Latin-1 text at two bytes a character', () => {
    const cache = new PasteCache(1 << 20);
    cache.set('a', paste('a000000000', 'é'.repeat(100)));
    cache.set('b', paste('b000000000', '✓'.repeat(100)));
    assert.equal(cache.bytes, O + 102 + O + 204);
  });

  test('does not keep a paste larger than a quarter of the bound', () => {
    const cache = new PasteCache(4000);
    cache.set('a', paste('a000000000', 'x'.repeat(1000)));
    assert.equal(cache.get('a'), undefined);
  });

  test('keeps exactly what a second-chance queue would, under any mix of reads, adds and deletes (fast-check)', () => {
    const max = 4 * (O + 102);
    /** The textbook algorithm, an array for a queue: the oldest first, a read one sent to the back once. */
    class Model {
      queue: { key: string; size: number; used: boolean }[] = [];
      bytes = 0;
      get(key: string): boolean {
        const e = this.queue.find((x) => x.key === key);
        if (e !== undefined) e.used = true;
        return e !== undefined;
      }
      delete(key: string): void {
        const i = this.queue.findIndex((x) => x.key === key);
        if (i === -1) return;
        this.bytes -= (this.queue[i] as { size: number }).size;
        this.queue.splice(i, 1);
      }
      set(key: string, size: number): void {
        this.delete(key);
        if (size > max / 4) return;
        while (this.bytes + size > max) {
          const oldest = this.queue.shift() as { key: string; size: number; used: boolean };
          if (oldest.used) this.queue.push({ ...oldest, used: false });
          else this.bytes -= oldest.size;
        }
        this.queue.push({ key, size, used: false });
        this.bytes += size;
      }
    }
    const op = fc.tuple(
      fc.constantFrom('get', 'get', 'set', 'set', 'delete'),
      fc.integer({ min: 0, max: 11 }),
      fc.integer({ min: 0, max: 110 }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 20, maxLength: 300, size: 'max' }), (ops) => {
        const cache = new PasteCache(max);
        const model = new Model();
        for (const [what, n, length] of ops) {
          const key = `k${n}`;
          if (what === 'get') assert.equal(cache.get(key) !== undefined, model.get(key), `a read of ${key}`);
          else if (what === 'delete') {
            cache.delete(key);
            model.delete(key);
          } else {
            // Stored as JSON: the content and its two quotes, with the entry's overhead.
            cache.set(key, paste(`${key.padEnd(10, '0')}`, 'x'.repeat(length)));
            model.set(key, O + length + 2);
          }
          assert.equal(cache.size, model.queue.length);
          assert.equal(cache.bytes, model.bytes);
          assert.ok(cache.bytes <= max);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('lets a deleted paste go, however the map was churned below its bound', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const cache = new PasteCache(1 << 24);
    let collected = false;
    const registry = new FinalizationRegistry<string>(() => (collected = true));
    const churn = (): void => {
      // Setting a key again deletes and re-adds it: the holes make V8 compact the table.
      for (let i = 0; i < 3_000; i++) cache.set(`k${i % 16}`, paste(`k${String(i % 16).padStart(9, '0')}`, 'y'));
    };
    (() => {
      const doomed = paste('d000000000', 'x'.repeat(100_000));
      registry.register(doomed, 'doomed');
      cache.set('d', doomed);
      assert.equal(cache.get('d'), doomed);
    })();
    churn();
    cache.delete('d');
    churn();
    for (let i = 0; i < 50 && !collected; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(collected, 'nothing may hold a deleted paste: its text may have been burned');
    assert.equal(cache.size, 16);
  });
});
