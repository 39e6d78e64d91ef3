import { RATE_MAX, TOKEN_LABEL_MAX } from '../auth/accounts.ts';
import { SCOPES, type Scope } from '../auth/tokens.ts';
import type { Fields } from '../http/fields.ts';
import { field } from './context.ts';
import { DIRECTION_CONTROL_RE, html, type SafeHtml } from './html.ts';

export const SCOPE_HELP: Record<Scope, string> = {
  read: 'read pastes',
  write: 'create, edit and delete your pastes',
  admin: 'everything, on every paste',
};

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
const LINE_BREAKING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The ticked `scope_<name>` boxes of a form, in the canonical order. */
export const scopesFrom = (form: Fields): Scope[] => SCOPES.filter((s) => field(form, `scope_${s}`) === '1');

/** What is wrong with the scopes, rate and (when asked) label of a token form. */
export function tokenFormProblems(form: Fields, allowed: readonly Scope[], withLabel: boolean): string[] {
  const problems: string[] = [];
  const scopes = scopesFrom(form);
  if (scopes.length === 0) problems.push('Choose at least one scope.');
  if (scopes.some((s) => !allowed.includes(s)))
    problems.push('The admin scope can only be held by tokens of admin users.');
  if (!/^\d{1,9}$/.test(field(form, 'rate').trim() || '0'))
    problems.push(`The rate limit must be a whole number from 0 to ${RATE_MAX} (0 = unlimited).`);
  if (withLabel) {
    const label = field(form, 'label');
    if ([...label].length > TOKEN_LABEL_MAX) problems.push(`The label must be at most ${TOKEN_LABEL_MAX} characters.`);
    if (LINE_BREAKING.test(label)) problems.push('The label must be a single line, without control characters.');
    if (DIRECTION_CONTROL_RE.test(label))
      problems.push('The label must not contain text-direction controls (U+202A–U+202E, U+2066–U+2069).');
  }
  return problems;
}

export const rateFrom = (form: Fields): number => Number(field(form, 'rate').trim() || '0');

/** One checkbox per scope the token may hold. */
export function scopeBoxes(allowed: readonly Scope[], selected: readonly Scope[], idPrefix: string): SafeHtml {
  return html`${allowed.map(
    (s) =>
      html`<label class="check" for="${idPrefix}-${s}" title="${SCOPE_HELP[s]}"><input type="checkbox" \
id="${idPrefix}-${s}" name="scope_${s}" value="1"${selected.includes(s) ? html` checked` : ''}> ${s}</label>`,
  )}`;
}

export const scopeBadges = (scopes: readonly Scope[]): SafeHtml =>
  html`<span class="badges">${scopes.map(
    (s) => html`<span class="badge${s === 'admin' ? ' badge-warn' : ' badge-accent'}">${s}</span>`,
  )}</span>`;

export const rateLabel = (rate: number): string => (rate === 0 ? 'Unlimited' : `${rate} / min`);
