import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Reminder } from '../../src/log/reminder.ts';

test('Reminder says a condition when it begins, then at most once every everyMs, however often it is seen', () => {
  let t = 0;
  const r = new Reminder(() => t, 10_000);
  const said: number[] = [];
  // Seen four times a second for 30 s, as start's attempts to reach the database are.
  for (; t < 30_000; t += 250) {
    const lasted = r.due();
    if (lasted !== null) said.push(lasted);
  }
  assert.deepEqual(said, [0, 10_000, 20_000]);
});

test('Reminder begins again, said at once, after it was ended', () => {
  let t = 0;
  const r = new Reminder(() => t, 10_000);
  assert.equal(r.due(), 0);
  t = 1_000;
  assert.equal(r.due(), null);
  r.end();
  t = 2_000;
  assert.equal(r.due(), 0);
  t = 12_000;
  assert.equal(r.due(), 10_000);
});
