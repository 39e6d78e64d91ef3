/** HTML that is safe to emit as is. Only `html` templates and `raw` make one. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const SPECIAL = /[&<>"']/;

/**
 * `s` with its five HTML specials as entities; a string with none comes back as it is,
 * uncopied. The regular expression finds the first special (the fastest scan of a string
 * with none); from there a loop copies runs between them: a `replace` with a function costs
 * a call per special, which made a page full of `&` slow to escape.
 */
export function escapeHtml(s: string): string {
  const first = s.search(SPECIAL);
  if (first === -1) return s;
  let out = s.slice(0, first);
  let from = first;
  for (let i = first; i < s.length; i++) {
    let entity: string;
    switch (s.charCodeAt(i)) {
      case 38:
        entity = '&amp;';
        break;
      case 60:
        entity = '&lt;';
        break;
      case 62:
        entity = '&gt;';
        break;
      case 34:
        entity = '&quot;';
        break;
      case 39:
        entity = '&#39;';
        break;
      default:
        continue;
    }
    if (from !== i) out += s.slice(from, i);
    out += entity;
    from = i + 1;
  }
  return from < s.length ? out + s.slice(from) : out;
}

type Value = SafeHtml | string | number | null | undefined | false | readonly Value[];

/** A template tag that escapes every interpolated value unless it is already SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] as string);
  return new SafeHtml(out);
}

function render(v: Value | undefined): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). */
export const DIRECTION_CONTROL_RE = /[\u202a-\u202e\u2066-\u2069]/;

/** `s` without direction controls, for places that cannot hold a `<bdi>` (the document title). */
export const withoutDirectionControls = (s: string): string =>
  s.replace(new RegExp(DIRECTION_CONTROL_RE.source, 'g'), '');

/**
 * Text a user chose (a title, a user name, a token label), isolated in `<bdi>`: its own
 * direction controls (U+202E and friends) then cannot reorder the page text around it.
 */
export const isolate = (s: string): SafeHtml => html`<bdi>${s}</bdi>`;

/** Marks trusted markup (e.g. the highlighter's output) as safe. */
export const raw = (s: string): SafeHtml => new SafeHtml(s);
