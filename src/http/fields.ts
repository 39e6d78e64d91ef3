import { HttpError } from './errors.ts';

/** A flat bag of submitted values. Objects have no prototype, so `__proto__` is only a key. */
export type FieldValue = string | number | boolean | null | Nested;

/** Stands for a JSON object or array value: unusable as any field, harmless in an ignored one. */
export interface Nested {
  readonly nested: true;
}
export const NESTED: Nested = Object.freeze({ nested: true });
export type Fields = Record<string, FieldValue>;

export const MAX_FIELDS = 64;
const MAX_JSON_DEPTH = 8;

export const emptyFields = (): Fields => Object.create(null) as Fields;

/**
 * Parses `a=1&b=two` (query strings and form bodies). `+` is a space; a bad percent escape,
 * a repeated name or more than MAX_FIELDS fields is a 400, never a guess.
 */
export function parseUrlEncoded(input: string, what: string): Fields {
  const out = emptyFields();
  if (input === '') return out;
  let count = 0;
  for (const pair of input.split('&')) {
    if (pair === '') continue;
    if (++count > MAX_FIELDS) throw new HttpError('bad_request', `${what} has more than ${MAX_FIELDS} fields`);
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq), what);
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1), what);
    if (Object.hasOwn(out, name)) throw new HttpError('bad_request', `${what} repeats the field "${name.slice(0, 40)}"`);
    out[name] = value;
  }
  return out;
}

/**
 * The first value of one field, read leniently: for picking the token out of a query
 * string that is otherwise malformed. An undecodable value counts as absent.
 */
export function findParam(input: string, name: string): string | null {
  for (const pair of input.split('&')) {
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    try {
      if (decode(pair.slice(0, eq), '') === name) return decode(pair.slice(eq + 1), '');
    } catch {
      // decode throws HttpError for a bad escape; here that just means "not this one".
    }
  }
  return null;
}

function decode(s: string, what: string): string {
  const plus = s.includes('+') ? s.replaceAll('+', ' ') : s;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    // decodeURIComponent throws URIError only, for malformed escapes or lone surrogates.
    throw new HttpError('bad_request', `${what} has a malformed percent-encoding`);
  }
}

/**
 * Parses a JSON body that must be one object; its values are kept as strings, numbers,
 * booleans and nulls, and nested objects or arrays become the NESTED marker.
 * Nesting depth is checked on the raw text first, so a hostile `[[[[...` is cheap to refuse.
 */
export function parseJsonObject(text: string): Fields {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new HttpError('bad_request', 'JSON body is nested too deeply');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse throws SyntaxError only; its message may echo input, so we don't forward it.
    throw new HttpError('bad_request', 'Body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError('bad_request', 'JSON body must be an object');
  }
  const out = emptyFields();
  const entries = Object.entries(parsed);
  if (entries.length > MAX_FIELDS) throw new HttpError('bad_request', `JSON body has more than ${MAX_FIELDS} fields`);
  for (const [name, value] of entries) {
    // Unknown fields are ignored whatever they hold; known ones are checked by the validators.
    out[name] = value !== null && typeof value === 'object' ? NESTED : (value as FieldValue);
  }
  return out;
}

/** The deepest nesting of [ and { outside strings. Linear, no allocation. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}
