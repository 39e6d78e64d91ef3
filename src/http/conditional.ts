/**
 * Whether an `If-None-Match` or `If-Match` header names `etag` (RFC 9110 §13.1.1, §13.1.2):
 * `*` names any current representation; otherwise a comma-separated list of entity tags.
 * `If-None-Match` compares weakly (a `W/` prefix is ignored), `If-Match` strongly (a weak
 * tag never matches). Our tags hold no comma, so splitting the list on commas is exact.
 */
export function namesEtag(header: string | undefined, etag: string, strong: boolean): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    const weak = tag.startsWith('W/');
    if ((weak ? tag.slice(2) : tag) === etag && !(strong && weak)) return true;
  }
  return false;
}
