import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RequestIds } from '../../src/http/request-id.ts';
import { makeToken, req, startServer } from '../helpers/server.ts';

const asked = (id?: string): IncomingMessage =>
  ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;

describe('request ids', () => {
  test("a client's sane id is kept; anything else gets one made here, unique per server run", () => {
    const ids = new RequestIds();
    assert.equal(ids.of(asked('abc-123_X.y:z')), 'abc-123_X.y:z');
    const made = [asked(), asked(''), asked('has space'), asked('x'.repeat(65)), asked('<script>'), asked('é')].map(
      (r) => ids.of(r),
    );
    for (const id of made) assert.match(id, /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/);
    assert.equal(new Set(made).size, made.length);
    assert.notEqual(new RequestIds().of(asked()).split('-')[0], made[0]?.split('-')[0], 'another run, another prefix');
  });

  test('every answer carries X-Request-Id: health, static files, the API, pages', async () => {
    const server = await startServer();
    for (const path of [
      '/healthz',
      '/static/app.css',
      '/api/v1/paste.php?hash=AAAAAAAAAA',
      '/',
      '/p/AAAAAAAAAA',
      '/nowhere',
    ]) {
      const r = await req(server, 'GET', path);
      assert.match(String(r.headers['x-request-id']), /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/, path);
      const mine = await req(server, 'GET', path, { headers: { 'x-request-id': 'trace-42' } });
      assert.equal(mine.headers['x-request-id'], 'trace-42', path);
    }
  });

  test("a fault's id is in the answer, the error page, the API log line and the server's report", async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const hash = String(
      (await req(server, 'POST', '/api/v1/paste_create.php', { token, body: { content: 'to break' } })).json['hash'],
    );
    await server.stop();
    // A paste file turned into a folder is a fault when read (on a server that has not cached it).
    const file = join(server.dataDir, 'pastes', hash.slice(0, 2), `${hash.slice(0, 6)}.json`);
    await rm(file);
    await mkdir(file);
    const again = await startServer({ dataDir: server.dataDir });
    const api = await req(again, 'GET', `/api/v1/paste.php?hash=${hash}`, {
      token,
      headers: { 'x-request-id': 'fault-api-1' },
    });
    assert.ok(api.status >= 500, `status ${api.status}`);
    assert.equal(api.headers['x-request-id'], 'fault-api-1');
    const page = await req(again, 'GET', `/p/${hash}`, { headers: { 'x-request-id': 'fault-web-1' } });
    assert.ok(page.status >= 500, `status ${page.status}`);
    assert.match(page.text, /Request id <code>fault-web-1<\/code>/);
    await again.stop();
    assert.match(again.output(), /request fault-api-1: /);
    assert.match(again.output(), /request fault-web-1: /);
    const logs = join(again.dataDir, 'logs');
    const lines = (await Promise.all((await readdir(logs)).map((f) => readFile(join(logs, f), 'utf8'))))
      .join('')
      .split('\n')
      .filter(Boolean);
    const line = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['request_id'] === 'fault-api-1');
    assert.equal(line?.['status'], api.status);
  });
});
