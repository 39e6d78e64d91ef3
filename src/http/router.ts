import { HttpError } from './errors.ts';
import { emptyFields } from './fields.ts';

/**
 * Routes are data: a method, a path pattern with `:param` segments, and whatever the
 * app wants to attach. Static paths resolve by one Map lookup; patterns by segment match.
 */
export interface RouteDef<T> {
  method: string;
  path: string;
  data: T;
}

export type Match<T> =
  | { kind: 'found'; data: T; params: Readonly<Record<string, string>>; pattern: string }
  | { kind: 'method_not_allowed'; allow: string[]; pattern: string }
  | { kind: 'not_found' };

interface Pattern<T> {
  path: string;
  segments: string[];
  /** Each segment's parameter name, or null for a literal segment. */
  names: (string | null)[];
  byMethod: Map<string, T>;
}

export class Router<T> {
  readonly #static = new Map<string, Map<string, T>>();
  readonly #patterns: Pattern<T>[] = [];

  constructor(routes: RouteDef<T>[]) {
    for (const r of routes) {
      const byMethod = r.path.includes(':') ? this.#pattern(r.path) : this.#staticFor(r.path);
      if (byMethod.has(r.method)) throw new Error(`duplicate route ${r.method} ${r.path}`);
      byMethod.set(r.method, r.data);
    }
  }

  match(method: string, path: string): Match<T> {
    let byMethod = this.#static.get(path);
    let params: Readonly<Record<string, string>> = NO_PARAMS;
    let pattern = path;
    if (byMethod === undefined) {
      for (const p of this.#patterns) {
        const got = matchSegments(p, path);
        if (got !== null) {
          byMethod = p.byMethod;
          params = got;
          pattern = p.path;
          break;
        }
      }
    }
    if (byMethod === undefined) return { kind: 'not_found' };
    // HEAD is served by the GET handler, as RFC 9110 §9.3.2 expects.
    const data = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
    if (data !== undefined) return { kind: 'found', data, params, pattern };
    const allow = [...byMethod.keys()];
    if (allow.includes('GET')) allow.push('HEAD');
    return { kind: 'method_not_allowed', allow, pattern };
  }

  #staticFor(path: string): Map<string, T> {
    let m = this.#static.get(path);
    if (m === undefined) this.#static.set(path, (m = new Map()));
    return m;
  }

  #pattern(path: string): Map<string, T> {
    const segments = path.split('/');
    let p = this.#patterns.find((q) => q.segments.join('/') === path);
    const names = segments.map((s) => (s.startsWith(':') ? s.slice(1) : null));
    if (p === undefined) this.#patterns.push((p = { path, segments, names, byMethod: new Map() }));
    return p.byMethod;
  }
}

/** The params of a static route: none, shared by every match. */
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);

/**
 * The params of `path` if its segments fit the pattern; patterns that do not fit allocate
 * nothing. The segments are found with indexOf in place: `path.split('/')` made an array
 * and a string per segment on every request to a pattern route.
 */
function matchSegments(pattern: Pattern<unknown>, path: string): Record<string, string> | null {
  const { segments, names } = pattern;
  const last = segments.length - 1;
  let start = 0;
  for (let i = 0; i <= last; i++) {
    const slash = path.indexOf('/', start);
    // The path has as many segments as the pattern: a slash after each but the last.
    if ((slash === -1) !== (i === last)) return null;
    const end = slash === -1 ? path.length : slash;
    const literal = names[i] === null ? (segments[i] as string) : null;
    if (literal !== null ? end - start !== literal.length || !path.startsWith(literal, start) : end === start)
      return null;
    start = end + 1;
  }
  // A bag of fields (http/fields.ts): nothing inherited, and V8 keeps the object fast.
  const params = emptyFields() as Record<string, string>;
  start = 0;
  for (let i = 0; i <= last; i++) {
    const slash = path.indexOf('/', start);
    const end = slash === -1 ? path.length : slash;
    const name = names[i];
    if (name !== null && name !== undefined) params[name] = path.slice(start, end);
    start = end + 1;
  }
  return params;
}

/** How a side words its 404 and 405. */
export interface RouteWords {
  notFound: string;
  notAllowed: (method: string) => string;
}

/**
 * The route for a request, or the refusal both sides give: 404 for an unknown path, 405
 * with an `Allow` header naming the methods the path has (RFC 9110 §15.5.6). A path that
 * matched a route's pattern, whatever the method, names it in `seen` (the metrics' label).
 */
export function resolveRoute<T>(
  router: Router<T>,
  method: string,
  path: string,
  words: RouteWords,
  seen: { pattern: string },
): { data: T; params: Readonly<Record<string, string>>; pattern: string } {
  const match = router.match(method, path);
  if (match.kind === 'not_found') throw new HttpError('not_found', words.notFound);
  seen.pattern = match.pattern;
  if (match.kind === 'method_not_allowed') {
    throw new HttpError('method_not_allowed', words.notAllowed(method), { headers: { allow: match.allow.join(', ') } });
  }
  return match;
}
