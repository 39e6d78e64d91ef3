import { contentOf, type Paste } from './paste.ts';

/** What My pastes searches for: words in the title or the text, a language, a privacy. */
export interface OwnedFilter {
  text?: string;
  language?: string;
  privacy?: string;
}

export const isSearch = (f: OwnedFilter): boolean =>
  f.text !== undefined || f.language !== undefined || f.privacy !== undefined;

/**
 * Whether a paste matches the search (README, Web pages: My pastes): the language and the
 * privacy as they are, the words anywhere in the title or the text, ignoring case as
 * JavaScript's toLowerCase does. Every backend decides a match here, so they agree.
 */
export function matchesOwned(
  f: OwnedFilter,
  p: Pick<Paste, 'title' | 'content_json' | 'language' | 'privacy' | 'encrypted'>,
): boolean {
  if (f.language !== undefined && p.language !== f.language) return false;
  if (f.privacy !== undefined && p.privacy !== f.privacy) return false;
  if (f.text === undefined) return true;
  const needle = f.text.toLowerCase();
  // An encrypted paste's text is an envelope: only its title is searched (README, Encrypted pastes).
  return p.title.toLowerCase().includes(needle) || (p.encrypted !== 1 && contentOf(p).toLowerCase().includes(needle));
}

/**
 * The most UTF-16 units a search's words may have once lowercased (README, Web pages: My
 * pastes): lowercasing can lengthen a text (U+0130 becomes two), so the bound is on what
 * the match compares, and the box shows what was searched.
 */
export const OWNED_QUERY_UNITS = 200;

/** `q` trimmed and cut, at a whole character, to OWNED_QUERY_UNITS once lowercased; undefined when empty. */
export function searchWords(q: string): string | undefined {
  let kept = '';
  let units = 0;
  for (const ch of q.trim()) {
    units += ch.toLowerCase().length;
    if (units > OWNED_QUERY_UNITS) break;
    kept += ch;
  }
  kept = kept.trim();
  return kept === '' ? undefined : kept;
}

/** `f` with its words bounded as searchWords bounds them. */
export function boundedFilter(f: OwnedFilter): OwnedFilter {
  const out: OwnedFilter = {};
  const text = f.text === undefined ? undefined : searchWords(f.text);
  if (text !== undefined) out.text = text;
  if (f.language !== undefined) out.language = f.language;
  if (f.privacy !== undefined) out.privacy = f.privacy;
  return out;
}

/** Searches of My pastes one user may run at once; one more is refused (README, Web pages: My pastes). */
export const OWNED_SEARCHES_PER_USER = 2;
/** Searches of My pastes the server runs at once, all users together; one more is refused. */
export const OWNED_SEARCHES_AT_ONCE = 4;

/**
 * Counts the searches running, per user and in all, so that one user's searches (or many
 * users' at once) cannot take every database connection or the whole disk from the rest.
 */
export class SearchGate {
  readonly #running = new Map<number, number>();
  #all = 0;

  constructor(
    private readonly perUser = OWNED_SEARCHES_PER_USER,
    private readonly atOnce = OWNED_SEARCHES_AT_ONCE,
  ) {}

  /** Takes a place for `userId`, or says who is full: the user, or the server. */
  enter(userId: number): 'user' | 'server' | (() => void) {
    const mine = this.#running.get(userId) ?? 0;
    if (mine >= this.perUser) return 'user';
    if (this.#all >= this.atOnce) return 'server';
    this.#running.set(userId, mine + 1);
    this.#all++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#all--;
      const now = (this.#running.get(userId) ?? 1) - 1;
      if (now === 0) this.#running.delete(userId);
      else this.#running.set(userId, now);
    };
  }
}
