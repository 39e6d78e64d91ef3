import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HttpError } from '../../src/http/errors.ts';
import { findParam, jsonDepth, MAX_FIELDS, NESTED, parseJsonObject, parseUrlEncoded } from '../../src/http/fields.ts';
import { assertInheritsNothing } from '../helpers/inherits.ts';

describe('parseUrlEncoded', () => {
  const cases: [string, Record<string, string>][] = [
    ['', {}],
    ['a=1&b=two', { a: '1', b: 'two' }],
    ['a=x+y%2Bz', { a: 'x y+z' }],
    ['flag', { flag: '' }],
    ['a=%C3%BC%E2%9C%93', { a: 'ü✓' }],
    ['a=1&&b=2&', { a: '1', b: '2' }],
    ['k=a=b', { k: 'a=b' }],
  ];
  for (const [input, expected] of cases) {
    test(`parses "${input}"`, () => assert.deepEqual({ ...parseUrlEncoded(input, 'q') }, expected));
  }
  test('produces objects that inherit nothing, so __proto__ is only a key', () => {
    const f = parseUrlEncoded('__proto__=x&constructor=y', 'q');
    assertInheritsNothing(f);
    assert.equal(f['__proto__'], 'x');
    assert.equal(({} as Record<string, unknown>)['x'], undefined);
  });
  for (const bad of ['a=%', 'a=%zz', 'a=%E0%A4%A', 'a=1&a=2']) {
    test(`refuses "${bad}" with 400`, () => {
      assert.throws(
        () => parseUrlEncoded(bad, 'q'),
        (e: unknown) => e instanceof HttpError && e.status === 400,
      );
    });
  }
  test(`refuses more than ${MAX_FIELDS} fields`, () => {
    const many = Array.from({ length: MAX_FIELDS + 1 }, (_, i) => `f${i}=1`).join('&');
    assert.throws(() => parseUrlEncoded(many, 'q'), HttpError);
  });
});

describe('parseJsonObject', () => {
  test('keeps strings, numbers, booleans and null', () => {
    const f = parseJsonObject('{"a":"s","b":1,"c":true,"d":null}');
    assert.deepEqual({ ...f }, { a: 's', b: 1, c: true, d: null });
    assertInheritsNothing(f);
  });
  test('keeps nested values only as an opaque marker', () => {
    const f = parseJsonObject('{"a":[1],"b":{"c":1},"d":"x"}');
    assert.equal(f['a'], NESTED);
    assert.equal(f['b'], NESTED);
    assert.equal(f['d'], 'x');
  });
  for (const bad of [
    '',
    'nope',
    '[]',
    '"s"',
    '1',
    'null',
    '['.repeat(10000),
    `{"a":${'['.repeat(9)}${']'.repeat(9)}}`,
  ]) {
    test(`refuses ${JSON.stringify(bad.slice(0, 20))} with 400`, () => {
      assert.throws(
        () => parseJsonObject(bad),
        (e: unknown) => e instanceof HttpError && e.status === 400,
      );
    });
  }
  test('measures depth outside strings only', () => {
    assert.equal(jsonDepth('{"a":"[[[[{{{{"}'), 1);
    assert.equal(jsonDepth('{"a":"\\"[["}'), 1);
    assert.equal(jsonDepth('[[[]]]'), 3);
  });
  test('ends a string at a quote after an even run of backslashes only', () => {
    // "x\\" is x and one backslash: the string ends there and [[1]] is structure.
    assert.equal(jsonDepth(String.raw`{"a":"x\\","b":[[1]]}`), 3);
    // "\\\"[[" is a backslash, a quote and two brackets, all inside the string.
    assert.equal(jsonDepth(String.raw`{"a":"\\\"[[","b":1}`), 1);
    assert.equal(jsonDepth('{"a":"[[[ unterminated'), 1);
  });
});

describe('findParam', () => {
  test('finds the first decodable value of a field in an otherwise malformed query', () => {
    assert.equal(findParam('a=%zz&token=abc&token=def', 'token'), 'abc');
    assert.equal(findParam('token=%zz&x=1', 'token'), null);
    assert.equal(findParam('token&x=1', 'token'), null);
    assert.equal(findParam('t%6Fken=a+b', 'token'), 'a b');
  });
});
