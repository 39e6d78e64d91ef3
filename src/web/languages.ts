import { LANGUAGES, KNOWN_LANGUAGES, languageRow } from '../paste/language.ts';
import { html, type SafeHtml } from './html.ts';

/** Labels of our own where highlight.js's read less well in a list (language-table.ts has the rest). */
const LABELS: Record<string, string> = {
  // An encrypted paste whose readers detect its language (README, Encrypted pastes).
  auto: 'Auto-detect',
};

/** How a language name reads to people; unknown names are shown as they are. */
export const languageLabel = (name: string): string => LABELS[name] ?? languageRow(name)?.[1] ?? name;

/**
 * How a paste's language reads: an encrypted paste left to its readers to detect has none
 * the server can name (only the browser that decrypts it can), so it reads "Encrypted".
 */
export const pasteLanguageLabel = (p: { language: string; encrypted?: 0 | 1 }): string =>
  p.encrypted === 1 && p.language === 'auto' ? 'Encrypted' : languageLabel(p.language);

/** The languages people paste most: the ones detection knows (paste/language.ts), which include the most asked for. */
const COMMON: readonly string[] = LANGUAGES;

const byLabel = (names: readonly string[]): [string, string][] =>
  names.map((l): [string, string] => [l, languageLabel(l)]).sort((a, b) => a[1].localeCompare(b[1]));

/** The language choices of the create and edit forms: detection, the common ones A to Z, then every other. */
export function languageChoices(): [string, string][] {
  const common = new Set(COMMON);
  return [['auto', 'Auto-detect'], ...byLabel(COMMON), ...byLabel(KNOWN_LANGUAGES.filter((l) => !common.has(l)))];
}

const option = ([value, label]: readonly [string, string], selected: string): SafeHtml =>
  html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;

/**
 * The form's `<option>`s: the common languages first, then every other in a group of its
 * own; a select finds an option by its first letters as they are typed.
 */
export function languageOptions(selected: string): SafeHtml {
  const choices = languageChoices();
  const commonEnd = COMMON.length + 1;
  const common = choices.slice(0, commonEnd).map((c) => option(c, selected));
  const all = choices.slice(commonEnd).map((c) => option(c, selected));
  return html`<optgroup label="Common">${common}</optgroup><optgroup label="All languages">${all}</optgroup>`;
}
