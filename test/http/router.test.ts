import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Router } from '../../src/http/router.ts';

const router = new Router<string>([
  { method: 'GET', path: '/a', data: 'get-a' },
  { method: 'POST', path: '/a', data: 'post-a' },
  { method: 'GET', path: '/p/:hash', data: 'paste' },
  { method: 'POST', path: '/p/:hash', data: 'paste-post' },
  { method: 'GET', path: '/p/:hash/raw', data: 'raw' },
]);

test('matches static paths and methods', () => {
  const m = router.match('GET', '/a');
  assert.ok(m.kind === 'found');
  assert.equal(m.data, 'get-a');
  assert.deepEqual({ ...m.params }, {});
  assert.equal((router.match('POST', '/a') as { data: string }).data, 'post-a');
});

test('matches parameters by segment', () => {
  const m = router.match('GET', '/p/abc');
  assert.equal(m.kind, 'found');
  assert.equal((m as { params: Record<string, string> }).params['hash'], 'abc');
  assert.equal((router.match('GET', '/p/abc/raw') as { data: string }).data, 'raw');
  assert.equal(router.match('GET', '/p/').kind, 'not_found');
  assert.equal(router.match('GET', '/p/a/b').kind, 'not_found');
});

test('answers 405 data with the allowed methods, HEAD going with GET', () => {
  assert.deepEqual(router.match('DELETE', '/a'), { kind: 'method_not_allowed', allow: ['GET', 'POST', 'HEAD'], pattern: '/a' });
  assert.equal((router.match('HEAD', '/a') as { data: string }).data, 'get-a');
  assert.deepEqual(router.match('PUT', '/p/x/raw'), { kind: 'method_not_allowed', allow: ['GET', 'HEAD'], pattern: '/p/:hash/raw' });
});

test('unknown paths are not found', () => {
  assert.equal(router.match('GET', '/nope').kind, 'not_found');
});

test('refuses duplicate routes when built', () => {
  assert.throws(() => new Router([{ method: 'GET', path: '/x', data: 1 }, { method: 'GET', path: '/x', data: 2 }]), /duplicate/);
  assert.throws(() => new Router([{ method: 'GET', path: '/x/:a', data: 1 }, { method: 'GET', path: '/x/:a', data: 2 }]), /duplicate/);
});
