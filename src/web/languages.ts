import { LANGUAGES } from '../paste/language.ts';

const LABELS: Record<string, string> = {
  // An encrypted paste whose readers detect its language (README, Encrypted pastes).
  auto: 'Auto-detect',
  text: 'Plain text',
  javascript: 'JavaScript',
  typescript: 'TypeScript',
  python: 'Python',
  php: 'PHP',
  ruby: 'Ruby',
  go: 'Go',
  rust: 'Rust',
  java: 'Java',
  c: 'C',
  cpp: 'C++',
  csharp: 'C#',
  bash: 'Bash',
  sql: 'SQL',
  html: 'HTML',
  css: 'CSS',
  json: 'JSON',
  yaml: 'YAML',
  markdown: 'Markdown',
  xml: 'XML',
  dockerfile: 'Dockerfile',
  diff: 'Diff',
  ini: 'INI',
  kotlin: 'Kotlin',
  swift: 'Swift',
  lua: 'Lua',
};

/** How a language name reads to people; unknown names are shown as they are. */
export const languageLabel = (name: string): string => LABELS[name] ?? name;

/**
 * How a paste's language reads: an encrypted paste left to its readers to detect has none
 * the server can name (only the browser that decrypts it can), so it reads "Encrypted".
 */
export const pasteLanguageLabel = (p: { language: string; encrypted?: 0 | 1 }): string =>
  p.encrypted === 1 && p.language === 'auto' ? 'Encrypted' : languageLabel(p.language);

/** The language choices of the create and edit forms: detection first, then A to Z. */
export function languageChoices(): [string, string][] {
  const named = LANGUAGES.map((l): [string, string] => [l, languageLabel(l)]).sort((a, b) => a[1].localeCompare(b[1]));
  return [['auto', 'Auto-detect'], ...named];
}
