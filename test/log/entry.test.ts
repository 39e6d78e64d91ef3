import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dayOf, IsoTimes } from '../../src/log/entry.ts';

test('IsoTimes.of is toISOString, also when asked for the same or an earlier millisecond again', () => {
  const times = [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 1_700_000_000_123, 86_399_999, 86_400_000];
  const iso = new IsoTimes();
  for (const ms of times) assert.equal(iso.of(ms), new Date(ms).toISOString());
});

test('dayOf reads the UTC day off toISOString() output and refuses any other shape', () => {
  assert.equal(dayOf('2024-03-10T23:59:59.999Z'), '2024-03-10');
  assert.equal(dayOf('2024-03-10T00:00:00Z'), '2024-03-10');
  for (const other of ['2024-03-10T23:00:00-05:00', '2024-03-10', 'yesterday', ''])
    assert.equal(dayOf(other), undefined, other);
});
