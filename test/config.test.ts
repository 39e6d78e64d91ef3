import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.ts';

test('parseConfig has defaults that work on a laptop', () => {
  const c = parseConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.dataDir, resolve('./data'));
  assert.equal(c.baseUrl, 'http://localhost:8080');
  assert.equal(c.maxPasteBytes, 1_048_576);
  assert.equal(c.trustProxy, false);
  assert.equal(c.authFailLimitPerMinute, 30);
  assert.equal(c.logRetentionDays, 30);
});

test('parseConfig reads every variable', () => {
  const c = parseConfig({
    PORT: '9000',
    HOST: '0.0.0.0',
    DATA_DIR: '/tmp/x',
    BASE_URL: 'https://paste.example/',
    MAX_PASTE_BYTES: '10',
    TRUST_PROXY: '1',
    AUTH_FAIL_LIMIT_PER_MINUTE: '5',
    LOG_RETENTION_DAYS: '7',
  });
  assert.deepEqual(
    [c.port, c.host, c.dataDir, c.baseUrl, c.maxPasteBytes, c.trustProxy, c.authFailLimitPerMinute, c.logRetentionDays],
    [9000, '0.0.0.0', '/tmp/x', 'https://paste.example', 10, true, 5, 7],
  );
  assert.equal(parseConfig({ PORT: '9000' }).baseUrl, 'http://localhost:9000');
});

test('parseConfig reports every bad variable at once', () => {
  try {
    parseConfig({
      PORT: 'eighty',
      MAX_PASTE_BYTES: '-1',
      TRUST_PROXY: 'maybe',
      BASE_URL: 'ftp://x',
      HOST: 'not..a..host',
    });
    assert.fail('expected ConfigError');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.problems.length, 5);
    assert.match(err.message, /HOST must be an IP address or a host name, got "not\.\.a\.\.host"/);
    assert.match(err.message, /PORT/);
  }
});

test('PASTE_CACHE_MB is 32 unless set, 0 turns the cache off, and a negative size is refused', () => {
  assert.equal(parseConfig({}).pasteCacheBytes, 32 * 1_048_576);
  assert.equal(parseConfig({ PASTE_CACHE_MB: '512' }).pasteCacheBytes, 512 * 1_048_576);
  assert.equal(parseConfig({ PASTE_CACHE_MB: '0' }).pasteCacheBytes, 0);
  assert.throws(
    () => parseConfig({ PASTE_CACHE_MB: '-1' }),
    (err) => err instanceof ConfigError && /PASTE_CACHE_MB/.test(err.message),
  );
});

test('HOST takes addresses and host names', () => {
  for (const host of ['0.0.0.0', '::', '::1', '192.168.1.20', 'localhost', 'paste.lan', 'my-box-01.example.org'])
    assert.equal(parseConfig({ HOST: host }).host, host);
  for (const host of ['not..a..host', '-lead.example', 'a b', 'host:8080', 'http://x'])
    assert.throws(() => parseConfig({ HOST: host }), /HOST must be/);
});

test('MAX_REVISIONS is 100 unless set, from 1 to 10000', () => {
  assert.equal(parseConfig({}).maxRevisions, 100);
  assert.equal(parseConfig({ MAX_REVISIONS: '3' }).maxRevisions, 3);
  for (const bad of ['0', '10001', 'many', '-1'])
    assert.throws(() => parseConfig({ MAX_REVISIONS: bad }), /MAX_REVISIONS must be an integer from 1 to 10000/);
});
