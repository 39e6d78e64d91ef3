import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long `until` waits by default: long enough for a loaded machine, short enough to fail fast. */
const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * Polls `check` until it holds and answers how long that took (ms); fails past `timeoutMs`
 * naming `what` it waited for. Tests wait on conditions this way, never by sleeping.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  opts: { timeoutMs?: number; what: string; everyMs?: number },
): Promise<number> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const t0 = performance.now();
  while (!(await check())) {
    if (performance.now() - t0 > timeoutMs) assert.fail(`waited ${timeoutMs} ms for ${opts.what}; it never happened`);
    await sleep(opts.everyMs ?? 20);
  }
  return performance.now() - t0;
}
