import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LineBudget } from '../../src/log/line-budget.ts';

const clock = () => {
  let t = 1_700_000_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
};

test('LineBudget admits a client’s first lines up to its budget, then none until it refills, then tells how many were not logged', () => {
  const c = clock();
  const budget = new LineBudget(c.now, 3);
  assert.deepEqual(
    Array.from({ length: 6 }, () => budget.admit('192.0.2.1')),
    [0, 0, 0, null, null, null],
  );
  assert.equal(budget.unlogged, 3);
  // Another client has its own budget.
  assert.equal(budget.admit('2001:db8::/64'), 0);
  c.advance(20_000);
  assert.equal(budget.admit('192.0.2.1'), 3);
  assert.equal(budget.admit('192.0.2.1'), null);
  c.advance(20_000);
  assert.equal(budget.admit('192.0.2.1'), 1);
  assert.equal(budget.unlogged, 4);
});

test('LineBudget forgets, a minute on, the clients whose budget has refilled', () => {
  const c = clock();
  const budget = new LineBudget(c.now, 60);
  for (let i = 0; i < 100; i++) budget.admit(`192.0.2.${i}`);
  for (let i = 0; i < 100; i++) budget.admit('198.51.100.1');
  assert.equal(budget.size, 101);
  c.advance(60_000);
  budget.admit('203.0.113.1');
  // Every client refilled in a minute; the newcomer is the one left.
  assert.equal(budget.size, 1);
  assert.equal(budget.unlogged, 40);
});
