import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_FIELDS } from '../../src/http/fields.ts';
import { parseUrlEncodedLenient as lenientQuery } from '../../src/http/fields.ts';
import { assertInheritsNothing } from '../helpers/inherits.ts';

describe('lenientQuery', () => {
  const cases: [string, Record<string, string>][] = [
    ['', {}],
    ['a=1&b=two+words', { a: '1', b: 'two words' }],
    ['a=%ZZ&b=2', { b: '2' }],
    ['%E0=1&c=3', { c: '3' }],
    ['x=1&x=2', { x: '2' }],
    ['flag&&=v&e=', { flag: '', '': 'v', e: '' }],
    ['n=%C3%A9', { n: 'é' }],
    // JSON.parse makes `__proto__` an own key, as the parser must.
    ['__proto__=p', JSON.parse('{"__proto__":"p"}') as Record<string, string>],
  ];
  for (const [input, want] of cases) {
    test(`reads ${JSON.stringify(input)} without refusing`, () => {
      const got = lenientQuery(input);
      assertInheritsNothing(got);
      assert.deepEqual({ ...got }, { ...want });
    });
  }

  test('stops after MAX_FIELDS pairs instead of refusing', () => {
    const q = Array.from({ length: MAX_FIELDS + 5 }, (_, i) => `k${i}=${i}`).join('&');
    const got = lenientQuery(q);
    assert.equal(Object.keys(got).length, MAX_FIELDS);
    assert.equal(got[`k${MAX_FIELDS}`], undefined);
  });
});
