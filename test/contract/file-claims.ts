import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { CLAIM_GRACE_MS, type ClaimedBytes, type FileClaims } from '../../src/paste/files.ts';

/** A hash of its own for each name. */
const H = (name: string): string => createHash('sha256').update(name).digest('hex');
/** Bytes to claim: a made-up hash and a size the count can tell apart from another's. */
const F = (name: string): ClaimedBytes => ({ sha256: H(name), size: 100 + name.length });

/** A `last` that counts its runs (the bytes' removal, under the hash's lock). */
function counted(): { last: () => Promise<void>; runs: () => number } {
  let n = 0;
  return {
    last: async () => {
      n++;
    },
    runs: () => n,
  };
}

const sorted = (xs: string[]): string[] => [...xs].sort();

/**
 * What every `FileClaims` promises (src/paste/files.ts; docs/files.md, Storing them): declared
 * once, run on each backend by test/contract/file-claims.test.ts.
 */
export function fileClaimsContract(open: () => Promise<FileClaims>): void {
  test('a claim is listed under its paste, once however often it is made; a paste without claims lists none', async () => {
    const c = await open();
    await c.claim('PasteA0001', F('a'), 1_000);
    await c.claim('PasteA0001', F('b'), 1_000);
    await c.claim('PasteA0001', F('a'), 2_000);
    await c.claim('PasteB0001', F('a'), 1_000);
    assert.deepEqual(sorted(await c.claims('PasteA0001')), sorted([H('a'), H('b')]));
    assert.deepEqual(await c.claims('PasteB0001'), [H('a')]);
    assert.deepEqual(await c.claims('Nobody0001'), []);
  });

  test('claims are counted per paste: dropping one of two holders keeps the bytes, the last one removes them, once', async () => {
    const c = await open();
    await c.claim('PasteA0002', F('shared'), 1_000);
    await c.claim('PasteB0002', F('shared'), 1_000);
    const bytes = counted();
    assert.equal(await c.drop('PasteA0002', H('shared'), 5_000, bytes.last), 'dropped');
    assert.equal(bytes.runs(), 0, 'another paste holds them');
    assert.deepEqual(await c.claims('PasteA0002'), []);
    assert.deepEqual(await c.claims('PasteB0002'), [H('shared')]);
    assert.equal(await c.drop('PasteB0002', H('shared'), 5_000, bytes.last), 'removed');
    assert.equal(bytes.runs(), 1);
    assert.deepEqual(await c.claims('PasteB0002'), []);
  });

  test('a claim one paste made twice is one claim: one drop removes the bytes', async () => {
    const c = await open();
    await c.claim('PasteA0003', F('twice'), 1_000);
    await c.claim('PasteA0003', F('twice'), 1_000);
    const bytes = counted();
    assert.equal(await c.drop('PasteA0003', H('twice'), 5_000, bytes.last), 'removed');
    assert.equal(bytes.runs(), 1);
  });

  test('a claim made after claimedBefore is young and stays, with the bytes; a claim made again counts from then', async () => {
    const c = await open();
    await c.claim('PasteA0004', F('young'), 10_000);
    const bytes = counted();
    assert.equal(await c.drop('PasteA0004', H('young'), 9_999, bytes.last), 'young');
    assert.equal(bytes.runs(), 0);
    assert.deepEqual(await c.claims('PasteA0004'), [H('young')]);
    // Claimed again later (a create whose first hash was taken): judged from the newer claim.
    await c.claim('PasteA0004', F('young'), 20_000);
    assert.equal(await c.drop('PasteA0004', H('young'), 15_000, bytes.last), 'young');
    assert.equal(await c.drop('PasteA0004', H('young'), 20_000, bytes.last), 'removed');
    assert.equal(bytes.runs(), 1);
  });

  test('a drop of a claim that is not there removes nothing another paste holds', async () => {
    const c = await open();
    await c.claim('PasteB0005', F('held'), 1_000);
    const bytes = counted();
    assert.equal(await c.drop('PasteA0005', H('held'), 5_000, bytes.last), 'dropped');
    assert.equal(bytes.runs(), 0);
    assert.deepEqual(await c.claims('PasteB0005'), [H('held')]);
  });

  test('when removing the bytes fails, the claim stays and the next drop tries again', async () => {
    const c = await open();
    await c.claim('PasteA0006', F('stuck'), 1_000);
    const failing = async (): Promise<void> => {
      throw new Error('the bucket is down');
    };
    await assert.rejects(c.drop('PasteA0006', H('stuck'), 5_000, failing), /the bucket is down/);
    assert.deepEqual(await c.claims('PasteA0006'), [H('stuck')], 'still found from its paste');
    const bytes = counted();
    assert.equal(await c.drop('PasteA0006', H('stuck'), 5_000, bytes.last), 'removed');
    assert.equal(bytes.runs(), 1);
    assert.deepEqual(await c.claims('PasteA0006'), []);
  });

  test('a new claim on bytes whose last claim is being dropped waits for the drop (the hash lock)', async () => {
    const c = await open();
    await c.claim('PasteA0007', F('locked'), 1_000);
    // Claims at once first, so a store with a pool has its connections open before the race below.
    await Promise.all(['w1', 'w2', 'w3', 'w4'].map((w) => c.claim('PasteW0007', F(w), 1_000)));
    const order: string[] = [];
    const dropped = c.drop('PasteA0007', H('locked'), 5_000, async () => {
      order.push('removing');
      // A claim on these bytes, then claims on others that no lock holds up, one after
      // another: those finish while the first waits for this removal to end.
      void c.claim('PasteB0007', F('locked'), 6_000).then(() => order.push('claimed again'));
      for (const other of ['free1', 'free2', 'free3']) await c.claim('PasteC0007', F(other), 6_000);
      order.push('removed');
    });
    assert.equal(await dropped, 'removed');
    await assert.doesNotReject(async () => {
      while (!order.includes('claimed again')) await new Promise((r) => setImmediate(r));
    });
    assert.deepEqual(order, ['removing', 'removed', 'claimed again']);
    assert.deepEqual(await c.claims('PasteB0007'), [H('locked')], 'the new claim is there after the removal');
  });

  test('a claim is due once its grace is over, a release from its time on; each paste once, at most `limit`', async () => {
    const c = await open();
    await c.claim('PasteA0008', F('due'), 1_000);
    const holders = async (now: number, limit = 100): Promise<string[]> =>
      sorted((await c.due(now, limit)).map((d) => d.holder));
    assert.deepEqual(await holders(1_000 + CLAIM_GRACE_MS), []);
    assert.deepEqual(await holders(1_000 + CLAIM_GRACE_MS + 1), ['PasteA0008']);
    await c.release('PasteB0008', 50_000);
    await c.release('PasteB0008', 60_000);
    await c.release('PasteC0008', 70_000);
    assert.deepEqual(await holders(49_999), ['PasteA0008']);
    assert.deepEqual(await holders(60_000), ['PasteA0008', 'PasteB0008']);
    assert.deepEqual(await holders(70_000), ['PasteA0008', 'PasteB0008', 'PasteC0008']);
    assert.equal((await holders(70_000, 2)).length, 2);
  });

  test('settled drops the releases that were seen, and none made since', async () => {
    const c = await open();
    await c.release('PasteA0009', 1_000);
    await c.release('PasteA0009', 2_000);
    const [seen] = await c.due(5_000, 10);
    assert.equal(seen?.holder, 'PasteA0009');
    // Released again while the sweep looked (the paste was edited): the next round must see it.
    await c.release('PasteA0009', 3_000);
    await c.settled(seen as NonNullable<typeof seen>);
    const next = await c.due(5_000, 10);
    assert.deepEqual(
      next.map((d) => d.holder),
      ['PasteA0009'],
    );
    await c.settled(next[0] as NonNullable<(typeof next)[0]>);
    assert.deepEqual(await c.due(5_000, 10), []);
  });

  test('settling a paste keeps its claims: only a drop takes them', async () => {
    const c = await open();
    await c.claim('PasteA0010', F('kept'), 1_000);
    for (const d of await c.due(1_000 + CLAIM_GRACE_MS + 1, 10)) await c.settled(d);
    assert.deepEqual(await c.due(1_000_000, 10), []);
    assert.deepEqual(await c.claims('PasteA0010'), [H('kept')]);
    // Claimed again after the settle: a new release and the claim stay.
    await c.claim('PasteA0010', F('kept'), 2_000);
    assert.deepEqual(
      (await c.due(2_000 + CLAIM_GRACE_MS + 1, 10)).map((d) => d.holder),
      ['PasteA0010'],
    );
  });

  test('stored() counts each claimed hash once, with its size, however many pastes hold it, and drops it with its last claim', async () => {
    const c = await open();
    const before = await c.stored();
    await c.claim('PasteA0011', F('count-one'), 1_000);
    await c.claim('PasteB0011', F('count-one'), 1_000);
    await c.claim('PasteB0011', F('count-three'), 1_000);
    const size = F('count-one').size + F('count-three').size;
    assert.deepEqual(await c.stored(), { files: before.files + 2, bytes: before.bytes + size });
    const bytes = counted();
    await c.drop('PasteA0011', H('count-one'), 5_000, bytes.last);
    await c.drop('PasteB0011', H('count-one'), 5_000, bytes.last);
    assert.deepEqual(await c.stored(), { files: before.files + 1, bytes: before.bytes + F('count-three').size });
  });
}
