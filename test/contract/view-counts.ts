import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_CONTENT } from '../../src/paste/paste.ts';
import type { PendingViews } from '../../src/paste/pending-views.ts';
import type { PasteRepository } from '../../src/paste/repository.ts';
import { pasteRecord as record } from '../helpers/paste-record.ts';

/** A backend's pending view counts over fresh storage, for the contract below. */
export interface ViewCountsBackend {
  pastes: Pick<PasteRepository, 'create' | 'get' | 'transact'>;
  /** A new counter over the same storage, with what was saved, as a server starting on it makes one. */
  counter(): Promise<PendingViews>;
}

/**
 * What every backend's pending view counts do (paste/pending-views.ts; README, Data on disk
 * and durability): declared once, run on each backend by test/contract/view-counts.test.ts.
 */
export function viewCountsContract(open: () => Promise<ViewCountsBackend>): void {
  const countOf = async (b: ViewCountsBackend, hash: string): Promise<number | undefined> =>
    (await b.pastes.get(hash))?.view_count;

  test('views are counted in memory and folded into the stored pastes: each answer counts what the stored copy does not hold yet', async () => {
    const b = await open();
    await b.pastes.create(() => record('ViewsA0001', { view_count: 10 }));
    await b.pastes.create(() => record('ViewsB0001'));
    const views = await b.counter();
    assert.equal(views.add('ViewsA0001', 10), 1);
    assert.equal(views.add('ViewsA0001', 10), 2);
    assert.equal(views.add('ViewsB0001', 0), 1);
    assert.equal(views.pending('ViewsA0001', 10), 2);
    assert.equal(views.pending('ViewsA0001', 12), 0, 'a stored copy that already took them in gets none twice');
    assert.equal(views.pending('Nothing001', 5), 0);
    assert.equal(views.size, 2);

    await views.drain();
    assert.equal(await countOf(b, 'ViewsA0001'), 12);
    assert.equal(await countOf(b, 'ViewsB0001'), 1);
    assert.equal(views.size, 0);
    assert.equal(views.pending('ViewsA0001', 12), 0);
    // Nothing pending: a drain, or a save, changes nothing.
    await views.save();
    await views.drain();
    assert.equal(await countOf(b, 'ViewsA0001'), 12);
  });

  test('a burned or deleted paste takes no folded views, and its count is dropped', async () => {
    const b = await open();
    await b.pastes.create(() => record('Burned0001', { burned: true, content_json: NO_CONTENT, view_count: 1 }));
    await b.pastes.create(() => record('Deleted001'));
    await b.pastes.create(() => record('Living0001'));
    const views = await b.counter();
    views.add('Burned0001', 1);
    views.add('Deleted001', 0);
    views.add('Living0001', 0);
    await b.pastes.transact('Deleted001', () => ({ result: null, next: 'delete' as const }));
    await views.drain();
    assert.equal(await countOf(b, 'Burned0001'), 1);
    assert.equal(await countOf(b, 'Living0001'), 1);
    assert.equal(await countOf(b, 'Deleted001'), undefined);
    assert.equal(views.size, 0);
  });

  test('counts saved are found by the next start, none lost and none counted twice, even when folded after the save', async () => {
    const b = await open();
    await b.pastes.create(() => record('Saved00001', { view_count: 4 }));
    await b.pastes.create(() => record('Folded0001'));
    const views = await b.counter();
    for (let i = 0; i < 3; i++) views.add('Saved00001', 4);
    for (let i = 0; i < 2; i++) views.add('Folded0001', 0);
    await views.save();
    // Folded after the save and before the next (a crash then): the next start must not count them again.
    await views.drain();
    const again = await b.counter();
    for (const [hash, total] of [
      ['Saved00001', 7],
      ['Folded0001', 2],
    ] as const) {
      const stored = (await countOf(b, hash)) ?? 0;
      assert.equal(stored + again.pending(hash, stored), total, hash);
    }
    await again.drain();
    await again.save();
    assert.equal(await countOf(b, 'Saved00001'), 7);
    assert.equal(await countOf(b, 'Folded0001'), 2);
    assert.equal(again.size, 0);
  });

  test('saves and drains asked for at once fold each count once, and a count made meanwhile stays pending', async () => {
    const b = await open();
    await b.pastes.create(() => record('AtOnce0001'));
    const views = await b.counter();
    for (let i = 0; i < 5; i++) views.add('AtOnce0001', 0);
    const all = Promise.all([views.drain(), views.save(), views.drain(), views.save()]);
    views.add('AtOnce0001', 0);
    await all;
    const stored = (await countOf(b, 'AtOnce0001')) ?? 0;
    assert.equal(stored + views.pending('AtOnce0001', stored), 6);
    await views.drain();
    assert.equal(await countOf(b, 'AtOnce0001'), 6);
    assert.equal(views.size, 0);
    await views.save();
    const again = await b.counter();
    assert.equal(again.pending('AtOnce0001', 6), 0);
  });
}
