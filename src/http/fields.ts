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

/**
 * What every bag of fields is made from: its prototype is an empty object with no prototype
 * of its own, so nothing is inherited (`__proto__`, `constructor` and `toString` are only
 * keys). `Object.create(null)` would do the same, but V8 keeps such objects as hash tables
 * from the start, and adding even the query's one field to one is slow on every request.
 */
const Bag = function (this: Fields) {} as unknown as new () => Fields;
Bag.prototype = Object.freeze(Object.create(null) as object) as Fields;
export const emptyFields = (): Fields => new Bag();
/** The fields of a request that sent none: shared, so frozen. */
export const NO_FIELDS: Readonly<Fields> = Object.freeze(emptyFields());

/**
 * One `name=value` pair of `a=1&b=two`, decoded (`+` is a space). A name or value whose
 * percent-encoding is malformed comes back as null; the callers decide what that means.
 */
function decodePair(pair: string): { name: string | null; value: string | null } {
  const eq = pair.indexOf('=');
  return { name: decode(eq === -1 ? pair : pair.slice(0, eq)), value: eq === -1 ? '' : decode(pair.slice(eq + 1)) };
}

function decode(s: string): string | null {
  const plus = s.includes('+') ? s.replaceAll('+', ' ') : s;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    // decodeURIComponent throws URIError only, for malformed escapes or lone surrogates.
    return null;
  }
}

/**
 * Parses query strings and form bodies strictly: a bad percent escape, a repeated name or
 * more than MAX_FIELDS fields is a 400, never a guess.
 */
export function parseUrlEncoded(input: string, what: string): Fields {
  const out = emptyFields();
  if (input === '') return out;
  let count = 0;
  for (const pair of input.split('&')) {
    if (pair === '') continue;
    if (++count > MAX_FIELDS) throw new HttpError('bad_request', `${what} has more than ${MAX_FIELDS} fields`);
    const { name, value } = decodePair(pair);
    if (name === null || value === null) throw new HttpError('bad_request', `${what} has a malformed percent-encoding`);
    if (Object.hasOwn(out, name))
      throw new HttpError('bad_request', `${what} repeats the field "${name.slice(0, 40)}"`);
    out[name] = value;
  }
  return out;
}

/**
 * Parses a query string leniently, for web pages: a pair that does not decode is skipped,
 * a repeated name keeps its last value, and pairs past MAX_FIELDS are ignored. A page reads
 * a few optional parameters, so a link mangled by a chat client or a tracker's
 * `?utm=…&utm=…` must still open it; the API keeps the strict reading, where a wrong guess
 * would change what a client gets.
 */
export function parseUrlEncodedLenient(input: string): Fields {
  const out = emptyFields();
  let count = 0;
  for (const pair of input.split('&')) {
    if (pair === '') continue;
    if (++count > MAX_FIELDS) break;
    const { name, value } = decodePair(pair);
    if (name !== null && value !== null) out[name] = value;
  }
  return out;
}

/**
 * The first value of one field, read leniently: for picking the token out of a query
 * string that is otherwise malformed. An undecodable value counts as absent.
 */
export function findParam(input: string, name: string): string | null {
  for (const pair of input.split('&')) {
    if (!pair.includes('=')) continue;
    const p = decodePair(pair);
    if (p.name === name) return p.value;
  }
  return null;
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

/**
 * The deepest nesting of [ and { outside strings. Linear, no allocation. Strings, most of
 * a paste's body, are skipped with indexOf rather than walked a character at a time.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) i = closingQuote(text, i);
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** Where the string opened at `open` ends: the next `"` not escaped by a backslash (the text's end if none). */
function closingQuote(text: string, open: number): number {
  for (let q = text.indexOf('"', open + 1); q !== -1; q = text.indexOf('"', q + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(q - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
  return text.length;
}
