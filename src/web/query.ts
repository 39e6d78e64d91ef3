import { emptyFields, MAX_FIELDS, type Fields } from '../http/fields.ts';

/**
 * A page's query string, read leniently: a pair that does not decode is skipped and a
 * repeated name keeps its last value. A page reads at most a few optional parameters, so a
 * link mangled by a chat client or a tracker's `?utm=…&utm=…` must still open the page; the
 * API keeps the strict reading, where a wrong guess would change what a client gets.
 */
export function lenientQuery(input: string): Fields {
  const out = emptyFields();
  let count = 0;
  for (const pair of input.split('&')) {
    if (pair === '') continue;
    // Beyond this many, the rest is noise no page reads; stop rather than refuse.
    if (++count > MAX_FIELDS) break;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    if (name !== null && value !== null) out[name] = value;
  }
  return out;
}

function decode(s: string): string | null {
  const plus = s.replaceAll('+', ' ');
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    // decodeURIComponent throws URIError only: a malformed escape or a lone surrogate.
    return null;
  }
}
