import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { RequestIds } from '../../src/http/request-id.ts';
import { req, startServer } from '../helpers/server.ts';

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
});
