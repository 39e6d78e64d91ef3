// Writes src/paste/language-table.ts, the names, labels and aliases of every language the
// server highlights, from the installed highlight.js and the grammars of src/web/grammars/.
// Run after upgrading highlight.js: `node --import tsx scripts/language-table.ts`, then
// `npx biome format --write src/paste/language-table.ts`.
import { writeFileSync } from 'node:fs';
import hljs from '#highlight.js';
import { OWN_GRAMMARS } from '../src/web/grammars/own.ts';

type Row = { name: string; label: string; aliases: string[]; grammar: string };

/** Names stored before highlight.js, kept as they were: a stored paste's language never changes meaning. */
const OURS: Record<string, string> = {
  plain: 'text',
  plaintext: 'text',
  txt: 'text',
  none: 'text',
  node: 'javascript',
  python3: 'python',
  shell: 'bash',
  mysql: 'sql',
  postgresql: 'sql',
  postgres: 'sql',
  sqlite: 'sql',
  htm: 'html',
  xhtml: 'html',
  svg: 'xml',
};
/** Our own names for highlight.js grammars, and the labels people know them by. */
const RENAMED: Record<string, string> = { plaintext: 'text', shell: 'console' };
const LABELS: Record<string, string> = {
  text: 'Plain text',
  xml: 'XML',
  ini: 'INI',
  php: 'PHP',
  console: 'Shell session',
  'python-repl': 'Python REPL',
  properties: 'Java properties',
};
/** Names of their own for what one highlight.js grammar covers. */
const SPLIT: Row[] = [
  { name: 'html', label: 'HTML', aliases: ['htm', 'xhtml'], grammar: 'xml' },
  { name: 'toml', label: 'TOML', aliases: [], grammar: 'ini' },
];

const rows = new Map<string, Row>();
for (const key of hljs.listLanguages()) {
  const lang = hljs.getLanguage(key);
  if (lang === undefined) continue;
  const name = RENAMED[key] ?? key;
  rows.set(name, { name, label: LABELS[name] ?? lang.name ?? name, aliases: [], grammar: key });
}
for (const row of SPLIT) rows.set(row.name, { ...row, aliases: [] });
for (const [name, { label }] of Object.entries(OWN_GRAMMARS))
  rows.set(name, { name, label, aliases: [], grammar: name });

const claimed = new Map<string, string>(Object.entries(OURS));
for (const row of SPLIT) for (const a of row.aliases) claimed.set(a, row.name);
for (const [name, { aliases }] of Object.entries(OWN_GRAMMARS)) for (const a of aliases) claimed.set(a, name);
for (const key of hljs.listLanguages()) {
  for (const alias of hljs.getLanguage(key)?.aliases ?? []) {
    const a = alias.toLowerCase();
    if (claimed.has(a) || rows.has(a)) continue;
    // highlight.js gives an alias two languages claim to the one registered last.
    const owner = hljs.listLanguages().find((k) => hljs.getLanguage(k) === hljs.getLanguage(a)) ?? key;
    claimed.set(a, RENAMED[owner] ?? owner);
  }
}
for (const [alias, name] of claimed) if (!rows.has(alias)) rows.get(name)?.aliases.push(alias);

const sorted = [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
const lines = sorted.map(
  (r) =>
    `  [${JSON.stringify(r.name)}, ${JSON.stringify(r.label)}, ${JSON.stringify(r.aliases.sort())}, ` +
    `${JSON.stringify(r.grammar)}],`,
);
writeFileSync(
  new URL('../src/paste/language-table.ts', import.meta.url),
  `// Written by scripts/language-table.ts from highlight.js ${hljs.versionString}; do not edit by hand.

/** [name, label, aliases, grammar]: a name as stored, how it reads, other names for it, its grammar. */
export type LanguageRow = readonly [string, string, readonly string[], string];

export const HIGHLIGHT_JS_VERSION = ${JSON.stringify(hljs.versionString)};

export const LANGUAGE_TABLE: readonly LanguageRow[] = [
${lines.join('\n')}
];
`,
);
