/**
 * Per-language tables for the highlighter. Most languages are one shared "code" lexer fed
 * different keywords, comment markers and string delimiters; markup (HTML, XML) and diffs
 * have lexers of their own and need no table.
 */

/** A token class; the highlighter renders it as `<span class="tk-KIND">`. */
export type Kind = 'kw' | 'str' | 'com' | 'num' | 'fn' | 'attr' | 'op';

export interface StringRule {
  readonly open: string;
  readonly close: string;
  /** A backslash escapes the next character. */
  readonly escape: boolean;
  /** May run past the end of a line (template literals, triple-quoted strings). */
  readonly multiline: boolean;
}

/** A token the generic rules don't cover (`$var`, `@decorator`), tried where `first` matches. */
export interface Extra {
  readonly first: string;
  /** Sticky (`y`), and must stop at the next `first` character so a failed try is cheap. */
  readonly re: RegExp;
  readonly kind: Kind;
  /** The kind instead when inside `{ }` (a CSS `#abc` is a colour there, an id outside). */
  readonly braced?: Kind;
}

export interface CodeRules {
  readonly lexer: 'code';
  readonly keywords: ReadonlySet<string>;
  /** Words shown as functions even without a call (shell builtins). */
  readonly builtins: ReadonlySet<string>;
  /** Keywords match in any case (SQL, PHP, YAML booleans). */
  readonly caseInsensitive: boolean;
  readonly lineComments: readonly string[];
  /** A line comment marker counts only at the start or after a space (`#` in shell, YAML). */
  readonly commentAfterSpace: boolean;
  readonly blockComments: readonly (readonly [string, string])[];
  /** Block comments nest (Rust, Kotlin, Swift). */
  readonly nestedComments: boolean;
  /** Longest opener first. */
  readonly strings: readonly StringRule[];
  /** Words that prefix a string literal and belong to it (`f"..."`, `b'...'`, `u8"..."`). */
  readonly stringPrefix: RegExp | undefined;
  /** Sticky pattern for a word. */
  readonly word: RegExp;
  readonly extras: readonly Extra[];
  /** Patterns tried once at the start of each line: `^(indentation)(token)`. */
  readonly lineStart: readonly (readonly [RegExp, Kind])[];
  /**
   * When a word or string followed by `:` is a key: never, always (JSON), inside braces (CSS),
   * or before a space (YAML).
   */
  readonly keys: 'never' | 'always' | 'braced' | 'spaced';
  /** Words in a selector (not among a block's declarations) are names (CSS). */
  readonly selectors: boolean;
  /** A `/` where an operand is expected starts a regular expression (JavaScript). */
  readonly regexLiterals: boolean;
  /** `name(` marks `name` as a function. */
  readonly calls: boolean;
  readonly numbers: boolean;
  readonly operators: boolean;
  /** Shell here-documents (`<<EOF` … `EOF`). */
  readonly heredocs: boolean;
  /** ASCII codes that may start a token (1) in this language; runs of the rest are emitted at once. */
  readonly starters: Uint8Array;
}

export type Rules = CodeRules | { readonly lexer: 'markup' } | { readonly lexer: 'diff' };

const words = (list: string): ReadonlySet<string> => new Set(list.split(/\s+/).filter(Boolean));
const str = (open: string, close = open, escape = true, multiline = false): StringRule => ({
  open,
  close,
  escape,
  multiline,
});
const WORD = /[A-Za-z_$][\w$]*/y;
const DQ = str('"');
const SQ = str("'");

/** Characters that may form an operator. */
export const OPERATORS = '+-*/%=<>!&|^~?:';

function code(overrides: Partial<Omit<CodeRules, 'starters'>>): CodeRules {
  const rules = {
    lexer: 'code',
    keywords: words(''),
    builtins: words(''),
    caseInsensitive: false,
    lineComments: ['//'],
    commentAfterSpace: false,
    blockComments: [['/*', '*/']],
    nestedComments: false,
    strings: [DQ, SQ],
    stringPrefix: undefined,
    word: WORD,
    extras: [],
    lineStart: [],
    keys: 'never',
    selectors: false,
    regexLiterals: false,
    calls: true,
    numbers: true,
    operators: true,
    heredocs: false,
    ...overrides,
  } as const;
  return { ...rules, starters: startersOf(rules) };
}

function startersOf(rules: Omit<CodeRules, 'starters'>): Uint8Array {
  const t = new Uint8Array(128);
  const mark = (chars: string): void => {
    for (let k = 0; k < chars.length; k++) t[chars.charCodeAt(k) & 127] = 1;
  };
  mark(`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$ \t{}<${OPERATORS}`);
  for (const m of rules.lineComments) mark(m.charAt(0));
  for (const [open] of rules.blockComments) mark(open.charAt(0));
  for (const s of rules.strings) mark(s.open.charAt(0));
  for (const e of rules.extras) mark(e.first);
  return t;
}

const ANNOTATION: Extra = { first: '@', re: /@[A-Za-z_][\w.]*/y, kind: 'fn' };
const SHELL_VAR: Extra = { first: '$', re: /\$(?:\{[^}\n$]*\}|[A-Za-z_]\w*|[0-9#?@*!$-])/y, kind: 'attr' };
const PREPROCESSOR = [/^(\s*)(#\s*include\s*<[^>\n]*>|#\s*[a-z]+)/, 'kw'] as const;
/** `#!/usr/bin/env node` is a comment to Node, though `#` is not otherwise. */
const SHEBANG = [/^()(#!.*)$/, 'com'] as const;
const HASH_COMMENTS = { lineComments: ['#'], blockComments: [], commentAfterSpace: true } as const;

const C =
  'auto break case char const continue default do double else enum extern float for goto ' +
  'if inline int long register restrict return short signed sizeof static struct switch ' +
  'typedef union unsigned void volatile while bool true false NULL size_t';
const CPP =
  `${C} alignas alignof catch class constexpr const_cast decltype delete dynamic_cast ` +
  'explicit export friend mutable namespace new noexcept nullptr operator override final ' +
  'private protected public reinterpret_cast static_assert static_cast template this ' +
  'thread_local throw try typeid typename using virtual concept requires co_await co_return';
const JS =
  'await break case catch class const continue debugger default delete do else export ' +
  'extends false finally for function if import in instanceof let new null return super ' +
  'switch this throw true try typeof undefined var void while with yield async of static get ' +
  'set from as';
const TS =
  `${JS} abstract any asserts bigint boolean declare enum implements infer interface is ` +
  'keyof namespace never number object private protected public readonly satisfies string ' +
  'symbol type unique unknown override accessor';
const CSS_VALUE: Extra = { first: '#', re: /#[\w-]+/y, kind: 'fn', braced: 'num' };

const TABLE: Readonly<Record<string, Rules>> = {
  c: code({
    keywords: words(C),
    stringPrefix: /^(?:u8|[uUL])$/,
    lineStart: [PREPROCESSOR],
  }),
  cpp: code({
    keywords: words(CPP),
    stringPrefix: /^(?:u8|[uUL])$/,
    lineStart: [PREPROCESSOR],
  }),
  java: code({
    keywords: words(
      'abstract assert boolean break byte case catch char class const continue ' +
        'default do double else enum extends final finally float for goto if implements import ' +
        'instanceof int interface long native new package private protected public return short ' +
        'static strictfp super switch synchronized this throw throws transient try void volatile ' +
        'while var record sealed permits yield true false null',
    ),
    strings: [str('"""', '"""', true, true), DQ, SQ],
    extras: [ANNOTATION],
  }),
  csharp: code({
    keywords: words(
      'abstract as base bool break byte case catch char checked class const ' +
        'continue decimal default delegate do double else enum event explicit extern false ' +
        'finally fixed float for foreach goto if implicit in int interface internal is lock long ' +
        'namespace new null object operator out override params private protected public ' +
        'readonly ref return sbyte sealed short sizeof stackalloc static string struct switch this ' +
        'throw true try typeof uint ulong unchecked unsafe ushort using virtual void volatile while ' +
        'var async await dynamic get set init value when where yield record nameof partial global',
    ),
    strings: [str('"""', '"""', false, true), str('@"', '"', false, true), DQ, SQ],
    lineStart: [[/^(\s*)(#\s*[a-z]+)/, 'kw']],
  }),
  kotlin: code({
    keywords: words(
      'as break class continue do else false for fun if in interface is null ' +
        'object package return super this throw true try typealias val var when while by catch ' +
        'constructor finally get import init set where abstract annotation companion const data ' +
        'enum external final infix inline inner internal lateinit open operator out override ' +
        'private protected public reified sealed suspend tailrec vararg',
    ),
    strings: [str('"""', '"""', false, true), DQ, SQ],
    nestedComments: true,
    extras: [ANNOTATION],
  }),
  swift: code({
    keywords: words(
      'associatedtype class deinit enum extension fileprivate func import init ' +
        'inout internal let open operator private protocol public rethrows static struct ' +
        'subscript typealias var break case catch continue default defer do else fallthrough ' +
        'for guard if in repeat return throw switch where while as false is nil self Self super ' +
        'throws true try async await some any actor final lazy mutating override required weak ' +
        'unowned convenience',
    ),
    strings: [str('"""', '"""', true, true), DQ],
    nestedComments: true,
    extras: [ANNOTATION],
  }),
  go: code({
    keywords: words(
      'break case chan const continue default defer else fallthrough for func go ' +
        'goto if import interface map package range return select struct switch type var true ' +
        'false nil iota bool byte rune string error int int8 int16 int32 int64 uint uint8 ' +
        'uint16 uint32 uint64 uintptr float32 float64 complex64 complex128 any',
    ),
    strings: [DQ, str('`', '`', false, true), SQ],
  }),
  rust: code({
    keywords: words(
      'as async await break const continue crate dyn else enum extern false fn for ' +
        'if impl in let loop match mod move mut pub ref return self Self static struct super ' +
        'trait true type unsafe use where while union i8 i16 i32 i64 i128 isize u8 u16 u32 u64 ' +
        'u128 usize f32 f64 bool char str',
    ),
    // A quote is a char literal only when it closes at once; otherwise it is a lifetime.
    strings: [str('"', '"', true, true)],
    nestedComments: true,
    stringPrefix: /^b?r?$/,
    extras: [
      { first: "'", re: /'(?:\\(?:u\{[\da-fA-F]{1,6}\}|x[\da-fA-F]{2}|.)|[^\\'\n])'/y, kind: 'str' },
      { first: "'", re: /'[A-Za-z_]\w*/y, kind: 'attr' },
      { first: '#', re: /#!?\[[^\]\n#]*\]/y, kind: 'attr' },
      { first: 'abcdefghijklmnopqrstuvwxyz_', re: /[a-z_]\w*!(?=[([{])/y, kind: 'fn' },
    ],
  }),
  javascript: code({
    keywords: words(JS),
    regexLiterals: true,
    lineStart: [SHEBANG],
    strings: [DQ, SQ, str('`', '`', true, true)],
  }),
  typescript: code({
    keywords: words(TS),
    regexLiterals: true,
    extras: [ANNOTATION],
    lineStart: [SHEBANG],
    strings: [DQ, SQ, str('`', '`', true, true)],
  }),
  php: code({
    keywords: words(
      'abstract and array as break callable case catch class clone const continue ' +
        'declare default do echo else elseif empty enddeclare endfor endforeach endif endswitch ' +
        'endwhile enum extends final finally fn for foreach function global goto if implements ' +
        'include include_once instanceof insteadof interface isset list match namespace new or ' +
        'print private protected public readonly require require_once return static switch ' +
        'throw trait try unset use var while xor yield true false null self parent',
    ),
    caseInsensitive: true,
    lineComments: ['//', '#'],
    strings: [str('"', '"', true, true), str("'", "'", true, true)],
    extras: [
      { first: '$', re: /\$[A-Za-z_]\w*/y, kind: 'attr' },
      { first: '<?', re: /<\?(?:php|=)?|\?>/y, kind: 'kw' },
    ],
  }),
  python: code({
    ...HASH_COMMENTS,
    commentAfterSpace: false,
    keywords: words(
      'False None True and as assert async await break class continue def del ' +
        'elif else except finally for from global if import in is lambda nonlocal not or pass ' +
        'raise return try while with yield match case',
    ),
    strings: [str('"""', '"""', true, true), str("'''", "'''", true, true), DQ, SQ],
    stringPrefix: /^(?:[rRbBuUfF]|[rR][bBfF]|[bBfF][rR])$/,
    extras: [ANNOTATION],
  }),
  ruby: code({
    ...HASH_COMMENTS,
    commentAfterSpace: false,
    keywords: words(
      'BEGIN END alias and begin break case class def defined? do else elsif end ' +
        'ensure false for if in module next nil not or redo rescue retry return self super then ' +
        'true undef unless until when while yield require require_relative attr_accessor ' +
        'attr_reader attr_writer include extend private protected public raise lambda proc loop',
    ),
    builtins: words('puts print p pp'),
    strings: [str('"', '"', true, true), str("'", "'", true, true)],
    extras: [
      { first: '@$', re: /(?:@@?|\$)[A-Za-z_]\w*/y, kind: 'attr' },
      { first: ':', re: /:[A-Za-z_]\w*[?!]?/y, kind: 'attr' },
    ],
  }),
  lua: code({
    keywords: words(
      'and break do else elseif end false for function goto if in local nil not or ' +
        'repeat return then true until while self',
    ),
    lineComments: ['--'],
    blockComments: [['--[[', ']]']],
    strings: [DQ, SQ, str('[[', ']]', false, true)],
  }),
  bash: code({
    ...HASH_COMMENTS,
    heredocs: true,
    extras: [SHELL_VAR],
    word: /[A-Za-z_][\w-]*/y,
    keywords: words(
      'if then else elif fi case esac for select while until do done in function ' +
        'time return exit break continue local export declare readonly typeset unset shift trap ' +
        'source alias set',
    ),
    builtins: words('echo printf read cd pwd test eval exec kill wait getopts let mapfile pushd ' + 'popd shopt umask'),
    strings: [str('"', '"', true, true), str("'", "'", false, true)],
  }),
  sql: code({
    caseInsensitive: true,
    lineComments: ['--'],
    keywords: words(
      'select from where and or not in is null like ilike between exists insert into ' +
        'values update set delete create table drop alter add column index primary key foreign ' +
        'references unique default check constraint view as join inner left right full outer ' +
        'cross on using group by order having limit offset union all distinct case when then else ' +
        'end asc desc with recursive returning begin commit rollback transaction if replace grant ' +
        'revoke truncate database schema trigger function procedure returns language declare ' +
        'int integer bigint smallint serial bigserial varchar char text boolean bool date time ' +
        'timestamp timestamptz interval numeric decimal real float double precision json jsonb ' +
        'uuid blob true false',
    ),
    strings: [str("'", "'", false, true), str('"', '"', false), str('`', '`', false)],
  }),
  css: code({
    keys: 'braced',
    selectors: true,
    calls: true,
    lineComments: [],
    word: /-{0,2}[A-Za-z_][\w-]*/y,
    extras: [CSS_VALUE, { first: '@!', re: /@[\w-]+|!important\b/y, kind: 'kw' }],
  }),
  json: code({ keys: 'always', keywords: words('true false null'), strings: [DQ], calls: false }),
  yaml: code({
    ...HASH_COMMENTS,
    keys: 'spaced',
    caseInsensitive: true,
    calls: false,
    word: /[A-Za-z_][\w.-]*/y,
    keywords: words('true false null yes no on off'),
    lineStart: [
      [/^(\s*)(---|\.\.\.)(?=\s|$)/, 'op'],
      [/^(\s*)(-)(?=\s|$)/, 'op'],
    ],
    extras: [{ first: '&*!', re: /[&*][\w-]+|!!?[\w-]+/y, kind: 'kw' }],
  }),
  ini: code({
    lineComments: [';', '#'],
    blockComments: [],
    commentAfterSpace: true,
    calls: false,
    operators: false,
    keywords: words('true false yes no on off'),
    caseInsensitive: true,
    strings: [DQ, SQ],
    lineStart: [
      [/^(\s*)(\[[^\]\n]*\])/, 'kw'],
      [/^(\s*)([^=;#\s[](?:[^=\n]*[^=\s])?)(?=[ \t]*=)/, 'attr'],
    ],
  }),
  dockerfile: code({
    ...HASH_COMMENTS,
    extras: [SHELL_VAR],
    calls: false,
    operators: false,
    keywords: words('AS'),
    lineStart: [
      [
        /^(\s*)(FROM|RUN|CMD|LABEL|MAINTAINER|EXPOSE|ENV|ADD|COPY|ENTRYPOINT|VOLUME|USER|WORKDIR|ARG|ONBUILD|STOPSIGNAL|HEALTHCHECK|SHELL)\b/i,
        'kw',
      ],
    ],
  }),
  markdown: code({
    lineComments: [],
    blockComments: [['<!--', '-->']],
    calls: false,
    numbers: false,
    operators: false,
    word: /[A-Za-z0-9_]+/y,
    strings: [str('```', '```', false, true), str('~~~', '~~~', false, true), str('`', '`', false)],
    lineStart: [
      [/^( {0,3})(#{1,6}(?:[ \t].*)?)$/, 'kw'],
      [/^( {0,3})((?:=+|-{3,}|\*{3,})[ \t]*)$/, 'kw'],
      [/^(\s*)(>.*)$/, 'com'],
      [/^(\s*)([-*+]|\d+[.)])(?=[ \t])/, 'op'],
    ],
    extras: [
      { first: '*_', re: /\*\*[^*\n]+\*\*|__[^_\n]+__|\*[^*\s][^*\n]*\*|_[^_\s][^_\n]*_/y, kind: 'attr' },
      { first: '[!', re: /!?\[[^\][\n]*\]\([^()\s]*\)/y, kind: 'fn' },
    ],
  }),
  html: { lexer: 'markup' },
  xml: { lexer: 'markup' },
  diff: { lexer: 'diff' },
};

/** The rules for `language`, or undefined for plain text and languages we don't know. */
export function rulesFor(language: string): Rules | undefined {
  return Object.hasOwn(TABLE, language) ? TABLE[language] : undefined;
}
