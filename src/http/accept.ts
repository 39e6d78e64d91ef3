/**
 * Whether a client's `Accept` header asks for plain text over JSON: `text/plain` (or
 * `text/*`) listed with a higher quality than `application/json` gets (itself, `application/*`
 * or `*\/*`). Without the header, or with `*\/*` alone (curl's default), JSON it is.
 */
export function prefersPlainText(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let text = 0;
  let json = 0;
  for (const part of accept.toLowerCase().split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q >= 0 && q <= 1)) continue;
    if (range === 'text/plain' || range === 'text/*') text = Math.max(text, q);
    else if (range === 'application/json' || range === 'application/*') json = Math.max(json, q);
    else if (range === '*/*') json = Math.max(json, q - 0.0001);
  }
  return text > 0 && text > json;
}
