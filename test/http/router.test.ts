import assert from 'node:assert/strict';
import fc from 'fast-check';
import { test } from 'node:test';
import { Router } from '../../src/http/router.ts';
import { assertInheritsNothing } from '../helpers/inherits.ts';

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
  assert.deepEqual(router.match('DELETE', '/a'), {
    kind: 'method_not_allowed',
    allow: ['GET', 'POST', 'HEAD'],
    pattern: '/a',
  });
  assert.equal((router.match('HEAD', '/a') as { data: string }).data, 'get-a');
  assert.deepEqual(router.match('PUT', '/p/x/raw'), {
    kind: 'method_not_allowed',
    allow: ['GET', 'HEAD'],
    pattern: '/p/:hash/raw',
  });
});

test('unknown paths are not found', () => {
  assert.equal(router.match('GET', '/nope').kind, 'not_found');
});

test('refuses duplicate routes when built', () => {
  assert.throws(
    () =>
      new Router([
        { method: 'GET', path: '/x', data: 1 },
        { method: 'GET', path: '/x', data: 2 },
      ]),
    /duplicate/,
  );
  assert.throws(
    () =>
      new Router([
        { method: 'GET', path: '/x/:a', data: 1 },
        { method: 'GET', path: '/x/:a', data: 2 },
      ]),
    /duplicate/,
  );
});

test('a pattern matches exactly the paths whose segments, split at every /, fit it', () => {
  const patterns = ['/p/:hash', '/p/:hash/raw', '/p/:hash/qr.svg', '/s/:code', '/u/:name/:tab', '/:any'];
  const r = new Router<string>(patterns.map((path) => ({ method: 'GET', path, data: path })));
  // The rule as written before segments were found in place: split, then compare each.
  const expected = (path: string): { data: string; params: Record<string, string> } | null => {
    const parts = path.split('/');
    for (const pattern of patterns) {
      const segs = pattern.split('/');
      if (segs.length !== parts.length) continue;
      const params: Record<string, string> = {};
      if (
        segs.every((s, i) =>
          s.startsWith(':') ? parts[i] !== '' && ((params[s.slice(1)] = parts[i] as string), true) : s === parts[i],
        )
      )
        return { data: pattern, params };
    }
    return null;
  };
  const segment = fc.constantFrom('', 'p', 's', 'u', 'raw', 'qr.svg', 'abc', 'raw2', 'q');
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 5 }), (segs) => {
      const path = `/${segs.join('/')}`;
      const got = r.match('GET', path);
      const want = expected(path);
      if (want === null) return assert.equal(got.kind, 'not_found', path);
      assert.ok(got.kind === 'found', path);
      assert.equal(got.data, want.data, path);
      assert.deepEqual({ ...got.params }, want.params, path);
      assertInheritsNothing(got.params);
    }),
    { numRuns: 3_000 },
  );
});
