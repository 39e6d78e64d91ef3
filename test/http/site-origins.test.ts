import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listenUrl, siteOrigins } from '../../src/http/site-origins.ts';

test('siteOrigins is BASE_URL origin alone when BASE_URL was given', () => {
  assert.deepEqual([...siteOrigins('https://paste.example/sub', false)], ['https://paste.example']);
  assert.deepEqual([...siteOrigins('http://localhost:8080', false)], ['http://localhost:8080']);
});

test('siteOrigins adds every loopback spelling of the same scheme and port when BASE_URL is the default', () => {
  assert.deepEqual(
    [...siteOrigins('http://localhost:8080', true)].sort(),
    ['http://127.0.0.1:8080', 'http://[::1]:8080', 'http://localhost:8080'].sort(),
  );
  // Port 80 is the scheme's own: a browser's Origin leaves it out.
  assert.deepEqual(
    [...siteOrigins('http://localhost:80', true)].sort(),
    ['http://127.0.0.1', 'http://[::1]', 'http://localhost'].sort(),
  );
});

test('listenUrl writes an IPv6 host in brackets, so the logged address is one a browser opens', () => {
  assert.equal(listenUrl('::1', 8080), 'http://[::1]:8080');
  assert.equal(listenUrl('::', 8080), 'http://[::]:8080');
  assert.equal(listenUrl('0.0.0.0', 8080), 'http://0.0.0.0:8080');
  assert.equal(listenUrl('localhost', 8080), 'http://localhost:8080');
  assert.equal(new URL(listenUrl('fe80::1', 80)).hostname, '[fe80::1]');
});
