import { CSRF_FIELD } from './csrf.ts';
import { html, type SafeHtml } from './html.ts';

/** The hidden CSRF field every state-changing form carries. */
export const csrfInput = (token: string | SafeHtml): SafeHtml =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;

/**
 * The `maxlength` for a field the server limits to `codePoints`: browsers count UTF-16
 * units, up to two per code point, so twice the limit never stops text the server would
 * take (an emoji title of 200 is fine); the server's own check is the real limit.
 */
export const inputMaxLength = (codePoints: number): number => codePoints * 2;

/** `<option>`s with the current value selected. */
export function options(choices: readonly (readonly [string, string])[], selected: string): SafeHtml {
  return html`${choices.map(
    ([value, label]) => html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`,
  )}`;
}

/** A list of what is wrong with a submitted form, or nothing. */
export function problemList(problems: readonly string[]): SafeHtml {
  if (problems.length === 0) return html``;
  // One problem reads as one sentence; a list is for several.
  if (problems.length === 1) return html`<div class="alert alert-error" role="alert">${problems[0] ?? ''}</div>`;
  return html`<div class="alert alert-error" role="alert"><strong>Please fix these:</strong><ul>${problems.map(
    (p) => html`<li>${p}</li>`,
  )}</ul></div>`;
}

/** A one-line notice (success, info, warning). */
export const notice = (kind: 'ok' | 'info' | 'warn' | 'error', message: string | SafeHtml): SafeHtml =>
  html`<div class="alert alert-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</div>`;

/** A checked attribute when `on`. */
export const checked = (on: boolean): SafeHtml | '' => (on ? html` checked` : '');
