import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseBody } from '../../src/http/body.ts';
import { HttpError } from '../../src/http/errors.ts';
import { MAX_FIELDS, parseJsonObject, parseUrlEncoded, parseUrlEncodedLenient } from '../../src/http/fields.ts';
import { resolveRoute, Router } from '../../src/http/router.ts';
import { webRoutes } from '../../src/web/routes.ts';
import { apiV1Routes } from '../../src/api/v1/routes.ts';
import { assertInheritsNothing } from '../helpers/inherits.ts';

/**
 * Properties of the parsers (fast-check): whatever a client sends, they answer fields or a
 * 400 (HttpError), never another error; and what a browser encodes comes back as it was.
 */
const RUNS = { numRuns: 300 };

/** Runs `f`; an HttpError is a refusal, anything else thrown fails the property. */
const refusesOnly = (f: () => unknown): boolean => {
  try {
    f();
    return true;
  } catch (err) {
    if (err instanceof HttpError) return true;
    throw err;
  }
};

/** Strings with what breaks parsers: %, +, &, =, quotes, braces, lone surrogates. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({
    unit: fc.constantFrom(
      '%',
      '+',
      '&',
      '=',
      'a',
      '2',
      'F',
      '"',
      '{',
      '}',
      '[',
      ']',
      ':',
      ',',
      '\\',
      'u',
      '\ud800',
      '0',
    ),
    maxLength: 120,
  }),
);

describe('form and query parsing', () => {
  test('any input gives fields or a 400, never another error', () => {
    fc.assert(
      fc.property(hostile, (s) => refusesOnly(() => parseUrlEncoded(s, 'form body'))),
      RUNS,
    );
    fc.assert(
      fc.property(hostile, (s) => typeof parseUrlEncodedLenient(s) === 'object'),
      RUNS,
    );
  });

  test('what URLSearchParams encodes decodes to the same fields, __proto__ included', () => {
    const key = fc.oneof(
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.constantFrom('__proto__', 'constructor', 'toString'),
    );
    const fields = fc.dictionary(key, fc.string({ unit: 'grapheme', maxLength: 40 }), { maxKeys: MAX_FIELDS });
    fc.assert(
      fc.property(fields, (f) => {
        const parsed = parseUrlEncoded(new URLSearchParams(Object.entries(f)).toString(), 'form body');
        assert.deepEqual({ ...parsed }, { ...f });
        assertInheritsNothing(parsed);
      }),
      RUNS,
    );
  });
});

describe('JSON body parsing', () => {
  test('any text gives fields or a 400', () => {
    fc.assert(
      fc.property(hostile, (s) => refusesOnly(() => parseJsonObject(s))),
      RUNS,
    );
    fc.assert(
      fc.property(fc.json({ maxDepth: 12 }), (s) => refusesOnly(() => parseJsonObject(s))),
      RUNS,
    );
  });

  test('a flat object of strings comes back as it was', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 20 }),
        (o) => {
          assert.deepEqual({ ...parseJsonObject(JSON.stringify(o)) }, { ...o });
        },
      ),
      RUNS,
    );
  });

  test('any bytes in any accepted body type give fields or a 400', () => {
    const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
    fc.assert(
      fc.property(fc.constantFrom('json', 'form', 'text') as fc.Arbitrary<'json' | 'form' | 'text'>, bytes, (type, b) =>
        refusesOnly(() => parseBody(type, b)),
      ),
      RUNS,
    );
  });
});

describe('route matching', () => {
  const web = new Router(webRoutes);
  const api = new Router(apiV1Routes);
  const words = { notFound: 'nothing', notAllowed: () => 'not allowed' };
  const method = fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'get', 'X');
  const path = fc.oneof(
    hostile,
    fc.webPath(),
    fc.string({ unit: fc.constantFrom('/', 'p', 's', ':', 'hash', 'raw', 'edit', '.', '%2F'), maxLength: 30 }),
  );

  test('any method and path find a route, or refuse with 404 or 405', () => {
    fc.assert(
      fc.property(method, path, (m, p) => {
        for (const resolve of [
          (seen: { pattern: string }) => resolveRoute(web, m, p, words, seen),
          (seen: { pattern: string }) => resolveRoute(api, m, p, words, seen),
        ]) {
          const seen = { pattern: 'unmatched' };
          try {
            assert.equal(resolve(seen).pattern, seen.pattern);
          } catch (err) {
            assert.ok(err instanceof HttpError && (err.status === 404 || err.status === 405), String(err));
            // A 405 is for a path that matched a route: its pattern is named; a 404 names none.
            assert.equal(seen.pattern === 'unmatched', err.status === 404);
          }
        }
      }),
      RUNS,
    );
  });

  test('a paste path finds its route with the segment as the parameter, whatever the segment', () => {
    const segment = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.includes('/'));
    fc.assert(
      fc.property(segment, fc.constantFrom('', '/raw', '/edit', '/delete'), (hash, tail) => {
        const found = resolveRoute(web, 'GET', `/p/${hash}${tail}`, words, { pattern: '' });
        assert.equal(found.params['hash'], hash);
      }),
      RUNS,
    );
  });
});
