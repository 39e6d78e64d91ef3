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
