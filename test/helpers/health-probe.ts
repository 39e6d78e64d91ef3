import assert from 'node:assert/strict';
import { req } from './server.ts';

/**
 * Asks `/healthz` again and again while a test makes the server work, and keeps the longest
 * answer: how long the server held its event loop as a client sees it. `stop` ends the probes
 * and answers that longest time (ms).
 */
export function probeHealth(server: { port: number }, everyMs: number): { stop(): Promise<number> } {
  let worst = 0;
  let polling = true;
  const poll = (async (): Promise<void> => {
    while (polling) {
      const t = performance.now();
      assert.equal((await req(server, 'GET', '/healthz')).status, 200);
      worst = Math.max(worst, performance.now() - t);
      // Paces the probes (not a wait for anything): the time each one takes is what is measured.
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      polling = false;
      await poll;
      return worst;
    },
  };
}
