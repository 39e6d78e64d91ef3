import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DatabaseProbe } from '../../src/pg/probe.ts';

/** A probe whose checks the test settles one by one, in any order, and the lines it made. */
function harness() {
  const pending: { ok: () => void; fail: (err: Error) => void }[] = [];
  const lines: string[] = [];
  const probe = new DatabaseProbe(
    () =>
      new Promise<void>((ok, fail) => {
        pending.push({ ok, fail });
      }),
    { up: () => lines.push('answers again'), down: () => lines.push('does not answer') },
  );
  return { probe, pending, lines };
}

test('DatabaseProbe: probes sent during an outage that time out after a later one succeeded are not news', async () => {
  const { probe, pending, lines } = harness();
  // The database stops: the first probe is refused, the next four hang until the timeout.
  const sent = [0, 1, 2, 3, 4].map(() => probe.probe());
  pending[0]?.fail(new Error('ECONNREFUSED'));
  await sent[0];
  assert.equal(probe.answering, false);
  // It is back: a new probe answers, then the four older ones time out one a second.
  const back = probe.probe();
  pending[5]?.ok();
  await back;
  for (const i of [1, 2, 3, 4]) pending[i]?.fail(new Error('did not answer within 5000 ms'));
  await Promise.all(sent);
  assert.deepEqual(lines, ['does not answer', 'answers again']);
  assert.equal(probe.answering, true);
});

test('DatabaseProbe: one line per change of state, however many probes agree', async () => {
  const { probe, pending, lines } = harness();
  const outcomes = [true, true, false, false, false, true, true, false, true];
  for (const [i, ok] of outcomes.entries()) {
    const p = probe.probe();
    if (ok) pending[i]?.ok();
    else pending[i]?.fail(new Error('down'));
    await p;
  }
  assert.deepEqual(lines, ['does not answer', 'answers again', 'does not answer', 'answers again']);
});

test('DatabaseProbe: an old success heard after a newer failure does not hide the outage', async () => {
  const { probe, pending, lines } = harness();
  const older = probe.probe();
  const newer = probe.probe();
  pending[1]?.fail(new Error('down'));
  await newer;
  pending[0]?.ok();
  await older;
  assert.deepEqual(lines, ['does not answer']);
  assert.equal(probe.answering, false);
});
