import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { makeToken, req, startServer } from '../helpers/server.ts';

/** A fault made by turning a paste file into a folder: the data folder's own (request-id.test.ts holds the rest). */

describe('request ids', () => {
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
