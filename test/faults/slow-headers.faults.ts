import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { SERVER_TIMEOUTS } from '../../src/server.ts';
import { cleanup, startServer } from '../helpers/server.ts';

/**
 * `npm run test:faults` (it takes headersTimeout, 10 s): a client that trickles its
 * request headers in, a line a second, is answered 408 and cut off within a second or two
 * of headersTimeout (README, Configuration), not when Node's default 30 s check comes round.
 */
test('request headers trickled in a line a second are cut off soon after headersTimeout', {
  timeout: 60_000,
}, async () => {
  const server = await startServer();
  try {
    const socket = connect(server.port, '127.0.0.1');
    const started = performance.now();
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => socket.write(`X-Slow-${Math.round(performance.now())}: 1\r\n`), 1_000);
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    clearInterval(trickle);
    const took = performance.now() - started;
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(took >= SERVER_TIMEOUTS.headersTimeout - 100, `cut after ${took.toFixed(0)} ms`);
    assert.ok(took < SERVER_TIMEOUTS.headersTimeout + 5_000, `cut after ${took.toFixed(0)} ms`);
  } finally {
    await server.stop();
    await cleanup(server.dataDir);
  }
});
