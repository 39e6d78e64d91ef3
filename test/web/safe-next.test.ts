import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { safeNext } from '../../src/web/pages/account.ts';

describe('safeNext', () => {
  const cases: [string, string][] = [
    ['/api_keys.php', '/api_keys.php'],
    ['/my?page=2', '/my?page=2'],
    ['', '/'],
    ['//evil.example', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example', '/'],
    ['/a b', '/'],
    ['/\u0000', '/'],
  ];
  for (const [input, expected] of cases)
    test(`${JSON.stringify(input)} → ${expected}`, () => assert.equal(safeNext(input), expected));
});
