/**
 * A Content-Disposition value with a file name (RFC 6266): `filename*` carries the name in
 * UTF-8, percent-encoded (RFC 8187), and `filename` an ASCII stand-in for old clients, with
 * every character that could end or bend the quoted string replaced.
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${extValue(name)}`;
}

/** A name percent-encoded for a `*` parameter (RFC 8187): Content-Disposition's, a Link's `title*`. */
export function extValue(name: string): string {
  // RFC 8187's attr-char: encodeURIComponent leaves ! ' ( ) * unescaped, which it does not allow.
  return encodeURIComponent(name).replace(
    /[!'()*]/g,
    (c) => `%${(c.codePointAt(0) as number).toString(16).toUpperCase()}`,
  );
}
