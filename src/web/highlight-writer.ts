import { escapeHtml } from './html.ts';

/** `text` with `&`, `<`, `>`, `"` and `'` as entities, safe in content and quoted attributes. */
export function escape(text: string): string {
  // Most tokens need no escaping, and looking first is much cheaper than replace(): for a
  // short token a loop, for a long run escapeHtml, whose regular expression scans faster.
  if (text.length > 16) return escapeHtml(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 38 || c === 60 || c === 62 || c === 34 || c === 39) return escapeHtml(text);
  }
  return text;
}
