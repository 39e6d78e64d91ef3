import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { relative, TimeTags } from '../../src/web/time.ts';

describe('relative times', () => {
  const now = Date.UTC(2026, 0, 10);
  const cases: [number, string][] = [
    [0, 'just now'],
    [-59_000, 'just now'],
    [30_000, 'in less than a minute'],
    [-60_000, '1 minute ago'],
    [-3 * 3_600_000, '3 hours ago'],
    [86_400_000 * 2, 'in 2 days'],
    [-86_400_000 * 14, '2 weeks ago'],
    [86_400_000 * 31, 'in 1 month'],
    [-86_400_000 * 800, '2 years ago'],
  ];
  for (const [delta, expected] of cases)
    test(`${delta} ms → ${expected}`, () => assert.equal(relative(now + delta, now), expected));

  test('a time tag carries the exact UTC time for machines and on hover', () => {
    assert.equal(
      new TimeTags().tag(now - 7_200_000, now).value,
      '<time datetime="2026-01-09T22:00:00.000Z" title="2026-01-09 22:00:00 UTC">2 hours ago</time>',
    );
  });

  test('a moment drawn again keeps its exact time and gets a new relative one, also after 5,000 others', () => {
    const times = new TimeTags();
    const at = now - 7_200_000;
    times.tag(at, now);
    assert.equal(
      times.tag(at, now + 3_600_000).value,
      '<time datetime="2026-01-09T22:00:00.000Z" title="2026-01-09 22:00:00 UTC">3 hours ago</time>',
    );
    for (let i = 1; i <= 5_000; i++) {
      const ms = at + i * 1_000;
      assert.equal(
        times.tag(ms, ms).value,
        `<time datetime="${new Date(ms).toISOString()}" title="${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC">just now</time>`,
      );
    }
    assert.equal(
      times.tag(at, now).value,
      '<time datetime="2026-01-09T22:00:00.000Z" title="2026-01-09 22:00:00 UTC">2 hours ago</time>',
    );
  });

  test('the tags kept never pass their bound, and each set of them is its own', () => {
    const times = new TimeTags(10);
    const other = new TimeTags(10);
    times.tag(now, now);
    times.tag(now, now + 60_000);
    assert.equal(times.kept, 1, 'one moment, however often it is drawn');
    assert.equal(other.kept, 0);
    for (let i = 0; i < 25; i++) {
      const ms = now - i * 1_000;
      assert.equal(times.tag(ms, now).value, other.tag(ms, now).value);
      assert.ok(times.kept <= 10, `${times.kept} kept`);
    }
  });
});
