import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { STATUS_BY_CODE } from '../../../src/http/errors.ts';
import { KNOWN_LANGUAGES } from '../../../src/paste/language.ts';
import { checkApiAnswer } from '../../helpers/openapi.ts';
import { makeToken, req, startServer } from '../../helpers/server.ts';

describe('the OpenAPI document', () => {
  test('is served without a token, and is a valid OpenAPI 3.1 document', async () => {
    const server = await startServer();
    const r = await req(server, 'GET', '/api/v1/openapi.json');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const doc = r.json as Record<string, unknown>;
    assert.equal(doc['openapi'], '3.1.0');
    assert.deepEqual(doc['servers'], [{ url: server.url }]);
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
  });

  test('takes its lists from the code: every language, every error code a client can get', async () => {
    const server = await startServer();
    const doc = (await req(server, 'GET', '/api/v1/openapi.json')).json as {
      components: { schemas: Record<string, { properties: Record<string, { enum?: unknown[] }> }> };
    };
    const { schemas } = doc.components;
    // `auto`: an encrypted paste's language left to its readers (README, Encrypted pastes).
    assert.deepEqual(schemas['Paste']?.properties['language']?.enum, [...KNOWN_LANGUAGES, 'auto']);
    assert.deepEqual(
      new Set(schemas['Error']?.properties['code']?.enum),
      new Set(Object.keys(STATUS_BY_CODE).filter((c) => c !== 'client_closed')),
    );
  });

  test('is logged like any API request, and other methods are 405', async () => {
    const server = await startServer();
    assert.equal((await req(server, 'POST', '/api/v1/openapi.json', { body: {} })).status, 405);
    assert.equal((await req(server, 'HEAD', '/api/v1/openapi.json')).status, 200);
  });
});

describe('answers are checked against the document', () => {
  const ok = {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-request-id': 'r-1' },
  };

  test('a conforming answer passes', () => {
    checkApiAnswer('POST', '/api/v1/paste_delete.php', { ...ok, text: '{"ok":true,"deleted":true}' });
    checkApiAnswer('GET', '/api/v1/nope.php', {
      status: 404,
      headers: ok.headers,
      text: '{"ok":false,"error":"Unknown endpoint","code":"not_found"}',
    });
  });

  test('a body off its schema, an undocumented status, a missing header or a wrong code fails', () => {
    assert.throws(
      () => checkApiAnswer('POST', '/api/v1/paste_delete.php', { ...ok, text: '{"ok":true}' }),
      /required property 'deleted'/,
    );
    assert.throws(
      () => checkApiAnswer('GET', '/api/v1/paste.php?hash=x', { status: 418, headers: ok.headers, text: '{}' }),
      /status 418 is not documented/,
    );
    assert.throws(
      () =>
        checkApiAnswer('GET', '/api/v1/paste.php', {
          status: 429,
          headers: ok.headers,
          text: '{"ok":false,"error":"x","code":"rate_limited"}',
        }),
      /header Retry-After is required/,
    );
    assert.throws(
      () =>
        checkApiAnswer('GET', '/api/v1/paste.php', {
          status: 404,
          headers: ok.headers,
          text: '{"ok":false,"error":"x","code":"gone"}',
        }),
      /must be equal to one of the allowed values/,
    );
    assert.throws(
      () =>
        checkApiAnswer('GET', '/api/v1/raw.php', {
          status: 200,
          headers: { ...ok.headers, etag: '"AAAAAAAAAA.1"', 'content-type': 'text/plain; charset=utf-8' },
          text: 'x',
        }),
      /Content-Security-Policy is required/,
    );
  });

  test('every answer the suite gets through req() is checked (a live paste read, for one)', async () => {
    const server = await startServer();
    const token = await makeToken(server.dataDir);
    const created = await req(server, 'POST', '/api/v1/paste_create.php', {
      token,
      body: { content: 'checked', title: 't' },
    });
    const read = await req(server, 'GET', `/api/v1/paste.php?hash=${String(created.json['hash'])}`, { token });
    assert.equal(read.status, 200);
    // The same answer with a field of the wrong type would have been refused by req().
    assert.throws(
      () =>
        checkApiAnswer('GET', '/api/v1/paste.php', {
          ...read,
          text: read.text.replace('"view_count":1', '"view_count":"1"'),
        }),
      /view_count/,
    );
  });
});
