import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeyedMutex } from '../../src/store/mutex.ts';

/** Lets every queued promise callback run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('enter waits for the work queued before it, and holds the key until its turn is left', async () => {
  const m = new KeyedMutex();
  const order: string[] = [];
  let finish!: () => void;
  const first = m.run('k', () => new Promise<void>((resolve) => (finish = resolve)).then(() => order.push('first')));
  const turn = m.enter('k').then((leave) => {
    order.push('entered');
    return leave;
  });
  await settle();
  assert.equal(order.length, 0, 'the turn waits for the run before it');
  finish();
  await first;
  const leave = await turn;
  const after = m.run('k', async () => order.push('after'));
  const other = m.run('other', async () => order.push('other key'));
  await other;
  await settle();
  assert.deepEqual(order, ['first', 'entered', 'other key'], 'the key is held; another key is not');
  leave();
  await after;
  assert.deepEqual(order, ['first', 'entered', 'other key', 'after']);
});
