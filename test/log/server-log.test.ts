import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ServerLog } from '../../src/log/server-log.ts';
import { BACKEND } from '../helpers/backend.ts';
import { database } from '../helpers/stored.ts';
import { cleanup, events, makeToken, req, spawnServer } from '../helpers/server.ts';

/** A log whose lines land in arrays, at a fixed time. */
function captured(format: 'json' | 'pretty'): { log: ServerLog; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    log: new ServerLog(format, { out: (l) => out.push(l), err: (l) => err.push(l) }, () =>
      Date.UTC(2026, 10, 24, 1, 2, 3),
    ),
    out,
    err,
  };
}

describe('the server log', () => {
  test('JSON: one line per event, info on stdout, the rest on stderr, a stack as a field', () => {
    const { log, out, err } = captured('json');
    log.info('listening on http://127.0.0.1:8080');
    log.warn('disk\u2028full', { path: '/x' });
    log.fault(new TypeError('boom'), 'req-7');
    log.fault('a plain string');
    assert.deepEqual(out, [
      '{"time":"2026-11-24T01:02:03.000Z","level":"info","message":"listening on http://127.0.0.1:8080"}',
    ]);
    assert.equal(err.length, 3);
    for (const line of err) assert.ok(!/[\n\u2028\u2029]/.test(line), 'one line each');
    assert.deepEqual(JSON.parse(err[0] ?? ''), {
      time: '2026-11-24T01:02:03.000Z',
      level: 'warn',
      message: 'disk\u2028full',
      path: '/x',
    });
    const fault = JSON.parse(err[1] ?? '') as Record<string, string>;
    assert.equal(fault['level'], 'error');
    assert.equal(fault['message'], 'boom');
    assert.equal(fault['error'], 'TypeError');
    assert.equal(fault['request_id'], 'req-7');
    assert.match(fault['stack'] ?? '', /^TypeError: boom\n\s+at /);
    assert.equal((JSON.parse(err[2] ?? '') as Record<string, string>)['message'], 'a plain string');
  });

  test('pretty: time, level, request id and message for people, the stack indented below', () => {
    const { log, out, err } = captured('pretty');
    log.info('shutdown complete');
    log.fault(new Error('boom'), 'req-8');
    assert.deepEqual(out, ['2026-11-24T01:02:03.000Z INFO  shutdown complete']);
    const [head, ...stack] = (err[0] ?? '').split('\n');
    assert.equal(head, '2026-11-24T01:02:03.000Z ERROR [req-8] boom');
    assert.ok(stack.length > 0 && stack.every((l) => l.startsWith('    at ')));
  });

  test("a real server: every line it prints is an event, and a fault's event names its request", async () => {
    const server = await spawnServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'x' } })).json['hash'],
    );
    await server.stop();
    // A read the storage fails in a way no rule covers: a folder where the paste's file was,
    // or on PostgreSQL a column of the paste's row gone (the start reads no paste's text).
    if (BACKEND === 'files') {
      const file = join(server.dataDir, 'pastes', hash.slice(0, 2), `${hash.slice(0, 6)}.json`);
      await rm(file);
      await mkdir(file);
    } else {
      const sql = await database(server.dataDir);
      await sql`alter table pastes rename column content_json to content_json_gone`;
    }
    const again = await spawnServer({ dataDir: server.dataDir });
    try {
      const r = await req(again, 'GET', `/api/v1/paste.php?hash=${hash}`, {
        token,
        headers: { 'x-request-id': 'trace-fault-1' },
      });
      assert.equal(r.status, 500);
      assert.equal(await again.stop(), 0);
      const fault = events(again.output()).find((e) => e.level === 'error');
      assert.equal(fault?.['request_id'], 'trace-fault-1');
      assert.match(String(fault?.['stack']), BACKEND === 'files' ? /EISDIR/ : /column "content_json" does not exist/);
    } finally {
      await cleanup(server.dataDir);
    }
  });
});
