import hljs, { type TokenNode } from '#highlight.js';
import { languageRow } from '../paste/language.ts';
import { OWN_GRAMMARS } from './grammars/own.ts';
import { escape } from './highlight-writer.ts';

/**
 * Highlighting by highlight.js, for every language it knows and the grammars/ it lacks. Its token tree (raw text under
 * scopes) is walked rather than its HTML parsed: each
 * text is escaped here, each scope mapped to one of our token classes (assets' tk-* rules),
 * and nesting flattened to one span at a time, split at line ends, so every line is balanced.
 */

for (const [name, { grammar }] of Object.entries(OWN_GRAMMARS)) {
  if (hljs.getLanguage(name) === undefined) hljs.registerLanguage(name, grammar);
}

/**
 * highlight.js's token tree with no HTML of its own: only the tree is walked here, and
 * writing its HTML was a good share of a highlighting's time. Results' `value` is empty.
 */
const TreeEmitter = hljs.highlight('', { language: 'plaintext' })._emitter.constructor as new (
  options: unknown,
) => { toHTML(): string };
hljs.configure({
  __emitter: class extends TreeEmitter {
    override toHTML(): string {
      return '';
    }
  },
});

/** highlight.js scopes (their first part) as our token classes; others inherit their parent's. */
const CLASS_OF: Readonly<Record<string, string>> = {
  keyword: 'kw',
  type: 'kw',
  literal: 'kw',
  doctag: 'kw',
  meta: 'kw',
  section: 'kw',
  bullet: 'kw',
  'template-tag': 'kw',
  built_in: 'fn',
  title: 'fn',
  name: 'fn',
  'selector-tag': 'fn',
  'selector-id': 'fn',
  'selector-class': 'fn',
  'selector-pseudo': 'fn',
  string: 'str',
  regexp: 'str',
  char: 'str',
  symbol: 'str',
  code: 'str',
  link: 'str',
  formula: 'str',
  number: 'num',
  comment: 'com',
  quote: 'com',
  attr: 'attr',
  attribute: 'attr',
  property: 'attr',
  variable: 'attr',
  'selector-attr': 'attr',
  'template-variable': 'attr',
  operator: 'op',
  addition: 'add',
  deletion: 'del',
};
/**
 * Scopes that end an enclosing class: their text is plain unless a child says otherwise. A
 * `function` or `class` holds a whole declaration, whose name is its `title` child.
 */
const PLAIN = new Set(['subst', 'params', 'tag', 'emphasis', 'strong', 'function', 'class']);
/** Scopes a grammar means otherwise: a diff's `meta` is its hunk header (tk-hunk). */
const GRAMMAR_CLASS: Readonly<Record<string, Readonly<Record<string, string>>>> = { diff: { meta: 'hunk' } };

/** Every token class a highlighted line may hold, each with its `tk-*` rule in the stylesheet. */
export const TOKEN_CLASSES: ReadonlySet<string> = new Set([
  ...Object.values(CLASS_OF),
  ...Object.values(GRAMMAR_CLASS).flatMap((own) => Object.values(own)),
]);

/** The grammar highlight.js highlights a known language with, if it has one. */
export function grammarOf(language: string): string | undefined {
  const grammar = languageRow(language)?.[3];
  return grammar !== undefined && grammar !== 'plaintext' && hljs.getLanguage(grammar) !== undefined
    ? grammar
    : undefined;
}

/** One piece of a text highlighted (`librarySlice`). */
export interface LibrarySlice {
  lines: string[];
  spansLeft: number;
  /** Nothing was left open at its end: the next piece can be highlighted on its own. */
  closed: boolean;
}

/**
 * `code` (lines joined by \n alone) highlighted with `grammar`: one HTML string per line, at
 * most `spans` spans in all.
 * Undefined when highlight.js gave up part way (its safe mode keeps a partial tree), so that
 * the caller shows the text plain rather than lose any of it.
 */
export function librarySlice(
  code: string,
  grammar: string,
  lineCount: number,
  spans: number,
): LibrarySlice | undefined {
  const result = hljs.highlight(code, { language: grammar, ignoreIllegals: true });
  const out = new SpanLines(spans);
  walk(result._emitter.rootNode, undefined, out, GRAMMAR_CLASS[grammar]);
  const lines = out.finish();
  if (out.length !== code.length || lines.length !== lineCount) return undefined;
  // At the end of the text, highlight.js's innermost open mode is the grammar itself when nothing is open.
  return { lines, spansLeft: out.spansLeft, closed: result._top === hljs.getLanguage(grammar) };
}

/** `librarySlice`'s lines alone. */
export const libraryLines = (code: string, grammar: string, lineCount: number, spans: number): string[] | undefined =>
  librarySlice(code, grammar, lineCount, spans)?.lines;

function walk(node: TokenNode, cls: string | undefined, out: SpanLines, own?: Readonly<Record<string, string>>): void {
  const scope = node.scope?.split('.', 1)[0];
  const next =
    scope === undefined || scope.startsWith('language:')
      ? cls
      : PLAIN.has(scope)
        ? undefined
        : (own?.[scope] ?? CLASS_OF[scope] ?? cls);
  for (const child of node.children) {
    if (typeof child === 'string') out.text(child, next);
    else walk(child, next, out, own);
  }
}

/** Collects classed text into lines of flat, balanced spans; past the budget, plain text. */
class SpanLines {
  readonly #lines: string[] = [];
  #parts: string[] = [];
  /** The open run: its class and its raw text, escaped once when it ends. */
  #cls: string | undefined;
  #run = '';
  #spansLeft: number;
  length = 0;

  get spansLeft(): number {
    return this.#spansLeft;
  }

  constructor(spans: number) {
    this.#spansLeft = spans;
  }

  text(text: string, cls: string | undefined): void {
    this.length += text.length;
    let from = 0;
    for (let nl = text.indexOf('\n', from); nl !== -1; nl = text.indexOf('\n', from)) {
      this.#add(text.slice(from, nl), cls);
      this.#endLine();
      from = nl + 1;
    }
    this.#add(text.slice(from), cls);
  }

  finish(): string[] {
    this.#endLine();
    return this.#lines;
  }

  #add(text: string, cls: string | undefined): void {
    if (text === '') return;
    const c = this.#spansLeft > 0 ? cls : undefined;
    if (c !== this.#cls) {
      this.#flush();
      // The run just written may have spent the last span.
      this.#cls = this.#spansLeft > 0 ? c : undefined;
    }
    this.#run += text;
  }

  #flush(): void {
    if (this.#run !== '') {
      const run = escape(this.#run);
      if (this.#cls === undefined) this.#parts.push(run);
      else {
        this.#parts.push(`<span class="tk-${this.#cls}">`, run, '</span>');
        this.#spansLeft--;
      }
    }
    this.#run = '';
  }

  #endLine(): void {
    this.#flush();
    this.#cls = undefined;
    this.#lines.push(this.#parts.join(''));
    this.#parts = [];
  }
}
