import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TokenUseCounts } from '../../src/auth/token-uses.ts';

/** A backend's token use over fresh storage, for the contract below. */
export interface TokenUsesBackend {
  /** A new token use over the same storage, loaded from what was saved, as a server starting at `now` makes one. */
  uses(now: number): Promise<TokenUseCounts>;
  /** Makes saves fail until the answer is called. */
  breakSaves(): Promise<() => Promise<void>>;
}

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0, 123);

/**
 * What every backend's token use does (auth/token-uses.ts; README, Web pages: API Tokens):
 * declared once, run on each backend by test/contract/token-uses.test.ts.
 */
export function tokenUsesContract(open: () => Promise<TokenUsesBackend>): void {
  test("a token's last use, address and last day's requests are saved and read back", async () => {
    const b = await open();
    const usage = await b.uses(T0);
    usage.touch('tok1', T0 - 2 * HOUR, '10.0.0.9');
    usage.touch('tok1', T0, '10.0.0.7');
    usage.touch('tok1', T0 + 1);
    usage.touch('tok2', T0 - 1000);
    assert.equal(usage.lastDay('tok1', T0 + 1), 3);
    await usage.save();
    const again = await b.uses(T0 + 1);
    assert.deepEqual(
      [again.get('tok1'), again.ip('tok1'), again.get('tok2'), again.ip('tok2'), again.get('tok3')],
      [T0 + 1, '10.0.0.7', T0 - 1000, undefined, undefined],
    );
    assert.equal(again.lastDay('tok1', T0 + 1), 3);
    assert.equal(again.lastDay('tok2', T0 + 1), 1);
    assert.equal(again.lastDay('tok1', T0 + 23 * HOUR), 2, 'the hour two hours before has left the window');
    assert.equal(again.lastDay('nobody', T0), 0);
  });

  test('a failed save keeps the uses for the next one, which writes them once', async () => {
    const b = await open();
    const usage = await b.uses(T0);
    const repair = await b.breakSaves();
    try {
      usage.touch('tok', T0, '10.0.0.1');
      await assert.rejects(usage.save());
      await assert.rejects(usage.save());
    } finally {
      await repair();
    }
    await usage.save();
    await usage.save();
    const back = await b.uses(T0);
    assert.deepEqual([back.get('tok'), back.ip('tok'), back.lastDay('tok', T0)], [T0, '10.0.0.1', 1]);
  });

  test('uses made while a save runs are in the next save, none lost and none counted twice', async () => {
    const b = await open();
    const usage = await b.uses(T0);
    usage.touch('tok', T0, '10.0.0.1');
    const first = usage.save();
    usage.touch('tok', T0 + 1, '10.0.0.2');
    await Promise.all([first, usage.save()]);
    await usage.save();
    const back = await b.uses(T0 + 1);
    assert.deepEqual([back.get('tok'), back.ip('tok'), back.lastDay('tok', T0 + 1)], [T0 + 1, '10.0.0.2', 2]);
  });
}
