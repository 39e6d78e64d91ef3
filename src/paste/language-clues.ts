/**
 * The clues the language detector (language.ts) adds up: line clues, tried on each trimmed
 * line whose first word they list, and text clues, tried once over the sample. Weights name
 * their languages; language.ts indexes them once, when it loads.
 */

/** Points per language; a negative weight counts against it. */
export type Weights = Readonly<Partial<Record<string, number>>>;

/** A pattern for one trimmed line, tried only on lines whose head word is listed. */
export interface LineClue {
  /** The lowercase first words (or first symbols), space-separated; undefined: any word. */
  readonly heads: string | undefined;
  readonly re: RegExp;
  readonly weights: Weights;
  /** How many matching lines score. */
  readonly max: number;
  /** A character every matching line ends with, checked before the pattern is run. */
  readonly last?: string;
}

/** A pattern tried once over the sample, and only when the literal `has` occurs in it. */
export interface TextClue {
  readonly has: string;
  readonly re: RegExp | undefined;
  readonly weights: Weights;
}

/** A line clue; `heads` are the lowercase first words (or first symbols) it needs. */
function line(heads: string, re: RegExp, weights: Weights, max = 1): LineClue {
  return { heads, re, weights, max };
}

/** A line clue tried on every line that starts with a word and ends with `last`, whatever the word. */
function anyLine(last: string, re: RegExp, weights: Weights, max = 1): LineClue {
  return { heads: undefined, re, weights, max, last };
}

/** A substring clue: `literal` must occur, and then `re` (when given) must match too. */
function has(literal: string, weights: Weights, re?: RegExp): TextClue {
  return { has: literal, re, weights };
}

// Every pattern is anchored or gated, and no two adjacent quantifiers can match the same
// characters, so each test is linear in the line (or sample) it runs on.
const TAG =
  'html|head|body|div|span|p|a|ul|ol|li|table|thead|tbody|tr|td|th|form|input|button|' +
  'label|select|option|textarea|img|h[1-6]|nav|header|footer|section|article|main|aside|' +
  'script|style|link|meta|br|hr|strong|em|iframe|canvas|svg|small|pre|code';
const SELECTOR = /^[.#:*]?[a-zA-Z*][^{};()=$"']*(?:,|\{(?:\s*[\w-]+\s*:[^;{}]*;)*\s*\}?)$/;
const CSS_PROPS =
  'color background background-color margin padding font font-family font-size ' +
  'font-weight display border border-radius width height position top left right bottom ' +
  'z-index transition transform animation line-height align-items justify-content flex gap ' +
  'grid-template-columns opacity cursor overflow content box-shadow max-width min-height ' +
  'text-align text-decoration';
const SHELL =
  'cd mkdir rm cp mv ln chmod chown sudo apt apt-get yum dnf brew npm npx yarn pnpm ' +
  'pip pip3 git curl wget tar docker kubectl make cat grep sed awk find ls touch exit ssh ' +
  'systemctl journalctl service pg_dump gzip unzip';

export const LINE_CLUES: readonly LineClue[] = [
  line('#', /^#\s*include\s*[<"]/, { c: 3, cpp: 3 }),
  line(
    '#',
    /^#include\s*<(?:iostream|vector|string|map|set|memory|algorithm|unordered_map|thread|cstdio|cstdlib|cstring|cmath|array|utility|functional|sstream|fstream|optional|chrono)>/,
    { cpp: 4 },
  ),
  line('#', /^#include\s*<\w+\.h>/, { c: 1 }),
  line('#', /^#\s*(?:define|ifndef|ifdef|endif|pragma|undef)\b/, { c: 2, cpp: 2 }),
  line('#', /^#!?\[\w+/, { rust: 4 }),
  line('#', /^#{2,6} \S/, { markdown: 3 }),
  line('`', /^```[\w+-]*$/, { markdown: 3 }, 2),
  line('#', /^# syntax=/, { dockerfile: 4 }),
  line(
    '# . : * body html a p ul ol li div span img table nav header footer main section article button input form ' +
      'label h1 h2 h3 h4 h5 h6 pre code',
    SELECTOR,
    { css: 3 },
  ),
  line(CSS_PROPS, new RegExp(`^(?:${CSS_PROPS.replaceAll(' ', '|')})\\s*:[^;]*;$`), { css: 1 }, 4),
  line('<', new RegExp(`^</?(?:${TAG})[\\s>/]`), { html: 2 }, 6),
  line('<', new RegExp(`^</?(?!(?:${TAG})[\\s>/])[\\w:.-]+(?:[\\s>/]|$)`), { xml: 1 }, 6),
  line('<', /^<(?:[\w.-]+:[\w.-]+|[A-Z]\w*)(?:[\s>/]|$)/, { xml: 2 }),
  line('@', /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/, { diff: 8 }),
  line('@', /^@(?:media|import|keyframes|font-face|supports|layer|tailwind|charset)\b/, { css: 4 }),
  line(
    '@',
    /^@(?:Override|Autowired|Service|Component|Repository|Entity|Test|Transactional|RestController|Controller|Bean|Configuration|SuppressWarnings|Deprecated|GetMapping|PostMapping|RequestMapping)\b/,
    { java: 3, kotlin: 1 },
  ),
  line(
    '@',
    /^@(?:State|Published|Binding|main|objc|MainActor|ObservedObject|StateObject|Environment|EnvironmentObject|IBOutlet|IBAction|escaping|discardableResult)\b/,
    { swift: 4 },
  ),
  line('@', /^@(?:Component|Injectable|Input|Output|NgModule|Directive|Pipe|HostListener|ViewChild)\(/, {
    typescript: 4,
  }),
  line(
    '@',
    /^@(?:property|staticmethod|classmethod|dataclass|pytest\.|app\.(?:route|get|post)|functools\.|lru_cache|abstractmethod)/,
    { python: 3 },
  ),
  line('-', /^- \S/, { yaml: 1, markdown: 1 }),
  line('-', /^- [\w-]+: /, { yaml: 3 }),
  line('-', /^--- [\w./]/, { diff: 2 }),
  line('-', /^---$/, { yaml: 1 }),
  line('-', /^--\[\[/, { lua: 4 }),
  line('-', /^-- \S/, { sql: 1, lua: 1 }),
  line('-', /^--[\w-]+\s*:/, { css: 4 }),
  line('+', /^\+\+\+ [\w./]/, { diff: 3 }),
  line('"', /^"[^"]*"\s*:/, { json: 1 }, 3),
  line('{', /^\{\s*"[^"]*"\s*:/, { json: 1 }, 3),
  line(
    '[',
    /^\[(?:Http\w+|Route|ApiController|Authorize|AllowAnonymous|Serializable|TestMethod|Fact|Theory|Required|JsonProperty|Key|Obsolete|Flags)\b/,
    { csharp: 3, ini: -3 },
  ),
  line(';', /^;/, { ini: 2 }),
  line('$', /^\$\w+\s*=/, { php: 3 }),
  line('>', /^> \S/, { markdown: 1 }),
  line('|', /^\|.*\|$/, { markdown: 2 }),
  line('|', /^\| ?[a-z][\w-]*(?: |$)/, { bash: 2 }, 3),
  line('`', /^```/, { markdown: 4 }),
  line('=', /^={3,}$/, { markdown: 3 }),
  line('def async', /^(?:async )?def \w+\s*\(.*:$/, { python: 4 }),
  line('async', /^async (?:with|for) .*:$/, { python: 3 }),
  line('except', /^except(?: [\w.]+(?: as \w+)?)?:$/, { python: 3 }),
  line('def', /^def (?:self\.)?\w+[?!=]?(?:\(.*\))?$/, { ruby: 4 }),
  line('class', /^class \w+(?:\(.*\))?:$/, { python: 3 }),
  line('class', /^class \w+ < [\w:]+$/, { ruby: 4 }),
  line('class', /^class \w+\s*:\s*(?:public|private|protected)\s/, { cpp: 3 }),
  line(
    'class data sealed open abstract',
    /^(?:(?:data|sealed|open|abstract|inner|value) )*class \w+(?:<[^>]*>)?\s*\((?:(?:private|internal|protected|public) )?va[lr] /,
    { kotlin: 4 },
  ),
  line('data', /^data class \w+/, { kotlin: 4 }),
  line('import', /^import .* from ['"]/, { javascript: 2, typescript: 2 }),
  line('import', /^import type /, { typescript: 4 }),
  line('import', /^import (?:static )?(?:java|javax|android|org|com)\.[\w.]+(?:\.\*)?;$/, { java: 4 }),
  line('import', /^import [a-z]\w*(?:\.\w+){2,}$/, { kotlin: 2 }),
  line('import', /^import (?:Foundation|SwiftUI|UIKit|Combine|XCTest|AppKit|\w+Kit)$/, { swift: 4 }),
  line('import', /^import [a-z_]\w*(?: as \w+)?(?:, [a-z_]\w*)*$/, { python: 2 }),
  line('import', /^import (?:\(|"[\w/.-]+")$/, { go: 3 }),
  line('from', /^from [\w.]+ import /, { python: 4 }),
  line('from', /^from [\w.]+(?: (?:as )?\w+)?$/i, { sql: 2 }),
  line(
    'run cmd copy add workdir expose env entrypoint arg label user volume healthcheck shell onbuild stopsignal',
    /^(?:RUN|CMD|COPY|ADD|WORKDIR|EXPOSE|ENV|ENTRYPOINT|ARG|LABEL|USER|VOLUME|HEALTHCHECK|SHELL|ONBUILD|STOPSIGNAL) \S/,
    { dockerfile: 1 },
    6,
  ),
  line('from', /^FROM (?:--platform=\S+ )?[\w.-]+(?:\/[\w.-]+)*(?::[\w.-]+)?(?:@sha256:\w+)?(?: AS \w+)?$/, {
    dockerfile: 2,
  }),
  line('from', /^FROM (?:--platform=\S+ )?(?=[\w./-]*[:/])[\w.:/-]+(?: AS \w+)?$/, { dockerfile: 2 }),
  line('select', /^select\s+(?:\*|distinct\b|top\b|[\w.]+(?:\(.*\))?(?:,|\s+as\s+\w+|$))/i, { sql: 3 }),
  line(
    'insert create alter drop delete update truncate',
    /^(?:insert\s+into|create\s+(?:or\s+replace\s+)?(?:table|index|view|unique\s+index|database|schema|function|trigger)|alter\s+table|drop\s+(?:table|index|view)|delete\s+from|update\s+[\w.]+\s+set|truncate\s+table)\b/i,
    { sql: 5 },
  ),
  line(
    'where group order having limit join left right inner outer full cross union values',
    /^(?:where|group\s+by|order\s+by|having|limit\s+\d|(?:(?:left|right|inner|full|cross)\s+)?(?:outer\s+)?join|union|values\s*\()\b/i,
    { sql: 1 },
    4,
  ),
  line('func', /^func (?:\([^)]*\) )?\w+\(/, { go: 3, swift: 2 }),
  line('func', /^func \(\w+ \*?[\w.]+\)/, { go: 3 }),
  line('func', /^func \w+(?:<[^>]*>)?\((?:\w+ )?\w+: /, { swift: 3 }),
  line('type', /^type \w+ (?:struct|interface|func|map\[|\[\]|chan )/, { go: 4 }),
  line('type export', /^(?:export )?type \w+(?:<[^>]*>)?\s*=/, { typescript: 4, rust: 1 }),
  line('fn pub async unsafe', /^(?:pub(?:\([\w:]+\))? )?(?:async )?(?:unsafe )?fn \w+/, { rust: 4 }),
  line('impl', /^impl(?:<[^>]*>)? [\w:<>, ]+\{$/, { rust: 4 }),
  line('use', /^use (?:std|core|alloc|crate|super|self|\w+)::/, { rust: 4 }),
  line('use', /^use [A-Z]\w*(?:\\\w+)+;$/, { php: 3 }),
  line('let', /^let mut /, { rust: 4 }),
  line('let var', /^(?:let|var) \w+: [A-Z][\w<>[\]?]*(?: =|$)/, { swift: 2, typescript: 1 }),
  line(
    'init convenience required override public private',
    /^(?:(?:convenience|required|override|public|private) )*init\??\(/,
    { swift: 3 },
  ),
  line('private public', /^(?:private|public|internal|fileprivate)\(set\) /, { swift: 3 }),
  line('guard if', /^(?:guard|if) let /, { swift: 5 }),
  line('struct', /^struct \w+: [\w, ]+\{$/, { swift: 4 }),
  line('struct', /^struct \w+\s*\{$/, { c: 1, cpp: 1, rust: 1, swift: 1 }),
  line('enum', /^enum \w+: \w+/, { swift: 3 }),
  line('case', /^case \.?\w+(?:\(.*\))?$/, { swift: 2 }),
  line('match', /^match .+\{$/, { rust: 2 }),
  line('package', /^package [a-z][\w.]*;$/, { java: 5 }),
  line('package', /^package [a-z]\w*(?:\.\w+)+$/, { kotlin: 4 }),
  line('package', /^package \w+$/, { go: 5 }),
  line('using', /^using (?:static )?[A-Z][\w.]*;$/, { csharp: 4 }),
  line('using', /^using namespace \w+;$/, { cpp: 5 }),
  line('namespace', /^namespace [A-Z][\w.]*\s*\{?$/, { csharp: 3 }),
  line('namespace', /^namespace \w+(?:\\\w+)+;$/, { php: 4 }),
  line('namespace', /^namespace [a-z_]\w*\s*\{$/, { cpp: 3 }),
  line(
    'public private protected static',
    /^(?:public |private |protected )?static void main\s*\(\s*String\s*\[\]\s*\w+\s*\)/,
    { java: 6 },
  ),
  line(
    'public private protected internal static',
    /^(?:(?:public|private|protected|internal|static|async) )*(?:void|int|Task) Main\s*\(/,
    { csharp: 6 },
  ),
  line('public private protected', /^(?:private|public|protected) (?:static )?final /, { java: 3 }),
  line(
    'public private protected internal',
    /^(?:private|public|protected|internal) (?:static )?readonly [\w<>,[\]]+ \w+/,
    { csharp: 3 },
  ),
  line('public private protected readonly', /^(?:(?:private|public|protected|readonly) )+[\w$]+\??: /, {
    typescript: 3,
  }),
  line(
    'public private protected internal',
    /^(?:public|private|protected|internal)(?: static| async| override| virtual| abstract)* (?:[A-Z]\w*|string|int|bool|void|decimal|double)(?:<[\w<>, ]+>)?(?:\[\])? [A-Z]\w*\(/,
    { csharp: 3 },
  ),
  line(
    'public private protected abstract sealed interface',
    /^(?:(?:public|private|protected|abstract|sealed|static) )*interface \w+(?:<[^>]*>)?(?: extends [\w<>, .]+)? ?\{$/,
    { java: 3, csharp: 2 },
  ),
  line(
    'public private protected internal interface',
    /^(?:(?:public|private|protected|internal) )?interface I[A-Z]\w*/,
    { csharp: 2 },
  ),
  line(
    'public private protected internal',
    /^(?:(?:public|private|protected|internal|static|sealed|abstract|partial) )*class \w+(?:<[^>]*>)? : [\w<>, .]+$/,
    { csharp: 3 },
  ),
  line(
    'public private protected abstract final',
    /^(?:(?:public|private|protected|abstract|final|static) )*class \w+(?:<[^>]*>)?(?: extends [\w.<>]+)?(?: implements [\w.<>, ]+)? ?\{?$/,
    { java: 2, csharp: 1, php: 1 },
  ),
  line(
    'fun suspend override private public internal open inline',
    /^(?:(?:private|public|internal|protected|override|open|suspend|inline|operator|infix|tailrec) )*fun (?:<[^>]*> )?[\w.]+\(/,
    { kotlin: 5 },
  ),
  line(
    'val private public internal override',
    /^(?:(?:private|public|internal|protected|override|lateinit) )*val \w+/,
    { kotlin: 3 },
  ),
  line('constructor', /^constructor\s*\(/, { javascript: 3, typescript: 3 }),
  anyLine(
    '{',
    /^(?!(?:if|for|while|switch|catch|with|function|return)\b)(?:(?:static|get|set|async) )*[a-z_$][\w$]*\s*\([\w$, ]*\)\s*\{$/,
    { javascript: 1 },
    3,
  ),
  line('export', /^export (?:default )?(?:async )?(?:function|class|const|let)\b/, { javascript: 2, typescript: 2 }),
  line('export', /^export (?:interface|type|enum|declare|abstract class|namespace)\b/, { typescript: 3 }),
  line('export', /^export [A-Z_][A-Z0-9_]*=/, { bash: 3 }),
  line('const let var', /^(?:const|let|var) [\w$]+\s*=\s*require\(/, { javascript: 4 }),
  line('const let var', /^(?:const|let|var) (?:[\w$]+|\{[^}]*\}|\[[^\]]*\])\s*=.*;$/, {
    javascript: 2,
    typescript: 2,
    rust: 1,
  }),
  line('const let var', /^(?:const|let|var) (?:[\w$]+|\{[^}]*\}|\[[^\]]*\])\s*=.*[^;]$/, {
    javascript: 1,
    typescript: 1,
    swift: 1,
  }),
  line('const let', /^(?:const|let) [\w$]+: [\w$<>[\]|, ]+=/, { typescript: 3 }),
  line('interface export', /^(?:export )?interface \w+(?:<[^>]*>)?(?: extends [\w<>, .]+)? ?\{$/, {
    typescript: 3,
    java: 1,
  }),
  line('function async export', /^(?:export )?(?:async )?function\*? ?[\w$]*\s*\(.*\{$/, {
    javascript: 2,
    typescript: 2,
  }),
  line(
    'function public private protected static final abstract',
    /^(?:(?:public|private|protected|static|final|abstract) )*function &?\w+\s*\(.*\$\w/,
    { php: 4 },
  ),
  line('function local', /^(?:local )?function [\w.:]+\s*\(.*\)$/, { lua: 2 }),
  line('function local', /^(?:local )?function \w+[.:]\w+\s*\(/, { lua: 3 }),
  line('local', /^local (?:function\b|\w+(?:, ?\w+)* = |\w+$)/, { lua: 4 }),
  line('local', /^local (?:-\w+ )?\w+=/, { bash: 3 }),
  line('if elseif', /^(?:if|elseif) [^;]+ then(?: |$)/, { lua: 3 }),
  line('for while', /^(?:for|while) [^;]+ do$/, { lua: 3 }),
  line('if elif while until', /^(?:if|elif|while|until) \[\[? /, { bash: 4 }),
  line('if elif while for until', /; (?:then|do)$/, { bash: 3 }),
  line('then do else fi done esac', /^(?:then|do|fi|done|esac)$/, { bash: 4 }),
  line('end', /^end$/, { ruby: 2, lua: 2 }),
  line('elsif unless until', /^(?:elsif|unless|until) /, { ruby: 3 }),
  line('puts', /^puts /, { ruby: 3 }),
  line('require require_relative', /^require(?:_relative)? ['"][\w/.-]+['"]$/, { ruby: 3 }),
  line(
    'attr_accessor attr_reader attr_writer belongs_to has_many has_one validates before_action include extend',
    /^\w+ :\w/,
    { ruby: 3 },
  ),
  line('module', /^module [A-Z]\w*(?:::[A-Z]\w*)*$/, { ruby: 4 }),
  line(
    'if elif while for with try except else finally',
    /^(?:if|elif|while|for|with|try|except|else|finally)\b.*:$/,
    { python: 2 },
    3,
  ),
  line('echo', /^echo (?:-[neE]+ )?["'$\w]/, { bash: 2 }),
  line('echo print', /^(?:echo|print) .*;$/, { php: 2 }),
  line('printf', /^printf ['"]/, { bash: 2 }),
  line('set shopt trap source', /^(?:set -[euxo]|shopt -s|trap ['"]|source )/, { bash: 4 }),
  line(SHELL, /^[\w-]+(?: |$)/, { bash: 1 }, 5),
  line('print', /^print\(/, { python: 1, lua: 1, swift: 1 }),
  line('println', /^println\(/, { kotlin: 2, scala: 1 }),
  line(
    'int char void long double float unsigned signed static const struct inline extern size_t bool',
    /^(?:(?:static|const|unsigned|signed|inline|extern|struct) )*(?:int|char|void|long|double|float|size_t|bool)(?:\s*\*+\s*|\s+)\w+\s*\(/,
    { c: 2, cpp: 2 },
  ),
  // The languages detection learnt after the first twenty-six: TOML, Haskell, Perl,
  // PowerShell, Makefile, HCL (Terraform), Scala, R, Elixir, Zig.
  line('[', /^\[\[[\w."-]+\]\]$/, { toml: 4, ini: -2 }),
  line('module', /^module [A-Z][\w.]*(?: \([^)]*\))? where$/, { haskell: 6 }),
  line('import', /^import qualified /, { haskell: 5 }),
  line('import', /^import (?:Data|Control|System|Text|Network)\.[A-Z]/, { haskell: 4 }),
  line('data newtype instance class', /^(?:data|newtype|instance|class) (?:\([^)]*\) => )?[A-Z][\w ]*(?:=|where$)/, {
    haskell: 3,
  }),
  line('main', /^main = do$/, { haskell: 4 }),
  line('use', /^use (?:strict|warnings|utf8|v?5[\d.]*);$/, { perl: 6 }),
  line('use', /^use [A-Z]\w*(?:::\w+)*(?: qw|[ ;(])/, { perl: 3 }),
  line('my', /^my [$@%(]/, { perl: 2 }, 4),
  line('sub', /^sub \w+\s*\{?$/, { perl: 3 }),
  line('param', /^param\s*\($/, { powershell: 4 }),
  line('function', /^function [A-Z][a-z]+-[A-Z]\w*/, { powershell: 5 }),
  line('.phony', /^\.PHONY\s*:/, { makefile: 6 }),
  line('ifeq ifneq ifdef ifndef', /^if(?:n?eq|n?def) [($]/, { makefile: 4 }),
  line(
    'resource data variable output module provider terraform locals',
    /^(?:resource|data|variable|output|module|provider|terraform|locals)(?: "[\w.-]+")* \{$/,
    { hcl: 5 },
  ),
  line('object', /^(?:case )?object [A-Z]\w*(?: extends [A-Z]\w*)?(?: \{)?$/, { scala: 3, kotlin: 1 }),
  line('case sealed abstract', /^(?:case class|sealed trait|sealed abstract class|abstract class) [A-Z]/, { scala: 4 }),
  line('import', /^import (?:scala|akka|cats|zio|org\.apache\.spark)\./, { scala: 5 }),
  line('library require', /^(?:library|require)\([\w.]+\)$/, { r: 5 }),
  line('defmodule', /^defmodule [A-Z][\w.]* do$/, { elixir: 7 }),
  line('def defp', /^defp? [a-z_]\w*[?!]?(?:\(.*\))?(?: when .*)? do$/, { elixir: 3 }),
  line('use alias import require', /^(?:use|alias|import|require) [A-Z][\w.]*(?:, .*)?$/, { elixir: 2 }),
  line('const', /^const \w+ = @import\("/, { zig: 8 }),
  line('pub', /^pub fn \w+\(.*\) !?[\w.]+ \{$/, { zig: 3 }),
];

export const TEXT_CLUES: readonly TextClue[] = [
  has('console.', { javascript: 3, typescript: 3 }),
  has('document.', { javascript: 2, typescript: 2 }),
  has('module.exports', { javascript: 5 }),
  has('require(', { javascript: 3 }, /\brequire\(['"]/),
  has('===', { javascript: 2, typescript: 2, php: 1 }),
  has('=>', { javascript: 1, typescript: 1 }, /\) => |\w => /),
  has('...', { javascript: 2, typescript: 2 }, /[({[,] ?\.\.\.[\w$]/),
  has(': ', { typescript: 3 }, /[\w)]\??: (?:string|number|boolean|void|unknown|never|any)\b/),
  has('Promise<', { typescript: 2 }),
  has('!:', { typescript: 3 }, /\w!: [\w$]/),
  has('@angular/', { typescript: 4 }),
  has('className=', { javascript: 3, typescript: 2 }),
  has('={', { javascript: 3, typescript: 2 }, / [a-z]\w*=\{/),
  has('use', { javascript: 2, typescript: 2 }, /\buse(?:State|Effect|Ref|Memo|Callback|Context)\(/),
  has('extends ', { typescript: 2, java: 1 }, /<[A-Z]\w*(?:, [A-Z]\w*)* extends /),
  has('implements ', { java: 2, typescript: 1, php: 1 }),
  has('(self', { python: 4 }, /\(self\b/),
  has('__', { python: 4 }, /__(?:init|name|main|str|repr|dict|class)__/),
  has('None', { python: 1, rust: 1 }, /\bNone\b/),
  has('elif ', { python: 2, bash: 1 }),
  has('lambda ', { python: 3 }, /\blambda \w*(?:, ?\w+)*:/),
  has('f"', { python: 2 }, /\bf"[^"\n]*\{/),
  has(':=', { go: 3 }),
  has('fmt.', { go: 4 }),
  has('err != nil', { go: 5 }),
  has('[]', { go: 3 }, /\[\](?:byte|string|int|float64|rune|\*?[A-Z]\w*\{)/),
  has('defer ', { go: 3, swift: 1 }, /^[ \t]*defer /m),
  has('!(', { rust: 5 }, /\b(?:println|print|eprintln|format|panic|assert|assert_eq|write|writeln|macro_rules)!\(/),
  has('vec![', { rust: 4 }),
  has('self', { rust: 4 }, /&(?:mut )?self\b/),
  has('&str', { rust: 3 }),
  has('::new(', { rust: 2, cpp: 1 }),
  has('.unwrap()', { rust: 3 }),
  has('std::', { cpp: 3, rust: 1 }),
  has('std::', { cpp: 4 }, /\bstd::(?:cout|cin|cerr|endl|string|vector|map|unique_ptr|shared_ptr|move)\b/),
  has('template', { cpp: 4 }, /\btemplate\s*</),
  has('nullptr', { cpp: 3 }),
  has('noexcept', { cpp: 3 }),
  has('constexpr', { cpp: 3 }),
  has('auto', { cpp: 2 }, /\bconst auto\b|\bauto\s*&/),
  has('printf(', { c: 3, cpp: 1 }, /\b(?:f|s|sn)?printf\(/),
  has('alloc(', { c: 2 }, /\b(?:m|c|re)alloc\(/),
  has('sizeof', { c: 2, cpp: 1 }),
  has('size_t', { c: 2, cpp: 1 }),
  has('str', { c: 2, cpp: 1 }, /\bstr(?:len|n?cmp|n?cpy|n?cat|chr|dup|tok)\(/),
  has('NULL', { c: 2, cpp: 1 }, /\bNULL\b/),
  has('->', { c: 1, cpp: 1, php: 2 }, /\w->\w/),
  has('typedef', { c: 3, cpp: 1 }),
  has('int main(', { c: 2, cpp: 2 }),
  has(' *', { c: 2, cpp: 1 }, /(?:^[ \t]*|\()(?:const )?(?:struct )?[A-Za-z_]\w* \*+[a-z_]\w*\s*[=;(,)]/m),
  has('System.out.print', { java: 5 }),
  has('String[]', { java: 3 }),
  has('assert', { java: 3 }, /\bassert(?:Equals|True|False|Throws|NotNull|That)\(/),
  has('.class', { java: 3 }, /\w\.class\b/),
  has('Optional<', { java: 3 }),
  has('<>()', { java: 2 }),
  has(' throws ', { java: 4 }, /\) throws [A-Z]/),
  has('Console.', { csharp: 5 }),
  has('get;', { csharp: 5 }, /\{ ?get; ?(?:(?:private |protected |init )?set; ?)?\}/),
  has('foreach (', { csharp: 4 }, /\bforeach \((?:var|[A-Z]\w*|string|int) \w+ in /),
  has('foreach', { php: 4 }, /\bforeach\s*\(\s*\$\w+ as /),
  has('Task<', { csharp: 3 }),
  has('using var ', { csharp: 4 }),
  has('Async(', { csharp: 3 }, /\bawait [\w.]+Async\(/),
  has('string.', { csharp: 4 }, /\bstring\.(?:Empty|Join|Format|IsNullOrEmpty)\b/),
  has('nameof(', { csharp: 3 }),
  has('$this->', { php: 5 }),
  has('->', { php: 3 }, /\$\w+->\w/),
  has('$', { php: 2 }, /\$\w+ = /),
  has('array(', { php: 2 }),
  has('fun ', { kotlin: 4 }, /\bfun (?:<[^>\n]*> )?\w+\(/),
  has('val ', { kotlin: 3 }, /\bval \w+\s*[:=]/),
  has('Of', { kotlin: 4 }, /\b(?:listOf|mutableListOf|mapOf|mutableMapOf|setOf|arrayOf)[(<]/),
  has('?.let', { kotlin: 3 }),
  has('companion object', { kotlin: 4 }),
  has('it.', { kotlin: 1 }, /\{ it\./),
  has('\\(', { swift: 4 }, /\\\([a-z_][\w.]*\)/i),
  has('as?', { swift: 2, kotlin: 1 }),
  has('some ', { swift: 4 }, /: some [A-Z]/),
  has('throws', { swift: 3 }, /\) (?:async )?throws(?: ->| \{)/),
  has(' -> ', { rust: 1, swift: 1, python: 1 }, /\) -> [\w[(&<]/),
  has('~=', { lua: 4 }),
  has('..', { lua: 2 }, / \.\. /),
  has('pairs(', { lua: 4 }, /\bi?pairs\(/),
  has('setmetatable', { lua: 5 }),
  has('do |', { ruby: 4 }, /\bdo \|[\w, ]+\|/),
  has('{ |', { ruby: 3 }, /\{ \|[\w, ]+\|/),
  has('#{', { ruby: 3 }, /"[^"\n]*#\{/),
  has('&:', { ruby: 4 }, /\(&:\w+\)/),
  has('%w', { ruby: 3 }, /%[wi][[(]/),
  has(' :', { ruby: 2 }, / :[a-z_]\w*(?=[\s,)]|$)/m),
  has('2>&1', { bash: 3 }),
  has(' | ', { bash: 2 }, /\| (?:grep|sort|uniq|head|tail|awk|sed|wc|xargs|tr|cut|tee|jq|less)\b/),
  has('/dev/null', { bash: 2 }),
  has('>&2', { bash: 2 }),
  has('$(', { bash: 2 }),
  has('${', { bash: 3 }, /\$\{\w+(?::?[-=?+]|[#%/])/),
  has('"$', { bash: 2 }, /"\$\w/),
  has('[ -', { bash: 3 }, /\[\[? -[a-zA-Z] /),
  has('xmlns', { xml: 4 }),
  has('class="', { html: 2 }),
  has('href="', { html: 1 }),
  has('px', { css: 2 }, /\d(?:px|rem|em|vh|vw|ms)\b/),
  has('!important', { css: 3 }),
  has('var(--', { css: 3 }),
  has('](', { markdown: 3 }, /\[[^\]\n]+\]\([^)\s]+\)/),
  has('**', { markdown: 2 }, /\*\*[^*\s][^*\n]*\*\*/),
  has('`', { markdown: 1 }, /`[^`\n]+`/),
  has(' = "', { toml: 2 }, /^[\w.-]+ = "[^"\n]*"$/m),
  has(' = [', { toml: 3, ini: -2 }, /^[\w.-]+ = \[/m),
  has(' = true', { toml: 1 }),
  has(' :: ', { haskell: 4 }, /^[a-z]\w*'? :: /m),
  has(' <- ', { haskell: 1, r: 2 }),
  has('$ ', { haskell: 2 }, /\w \$ \w/),
  has(' where', { haskell: 2 }, /\n {2,}where\b/),
  has('my ', { perl: 3 }, /\bmy [$@%]\w/),
  has('=~', { perl: 3, ruby: 1 }),
  has('$_', { perl: 2, powershell: 1 }),
  has('@ARGV', { perl: 4 }),
  has('print ', { perl: 2 }, /\bprint (?:STDERR|STDOUT|\$fh|"[^"\n]*\\n")/),
  has(
    '-',
    { powershell: 5 },
    /\b(?:Get|Set|New|Remove|Write|Invoke|Test|Start|Stop|Import|Export|Add|Out|Select|Where|ForEach|Join|Split|ConvertTo|ConvertFrom)-[A-Z][a-z]\w*/,
  ),
  has('$env:', { powershell: 4 }),
  has('[CmdletBinding(', { powershell: 6 }),
  has(']$', { powershell: 3 }, /\[(?:string|int|switch|bool|object|array|hashtable)(?:\[\])?\]\$/i),
  has('\n\t', { makefile: 4 }, /^[\w.%/$()-]+(?: [\w.%/$()-]+)* *:(?!=)[^=\n]*\n\t\S/m),
  has('$', { makefile: 3 }, /\$[@<^]|\$\((?:CC|CXX|CFLAGS|LDFLAGS|MAKE|shell|wildcard|patsubst|addprefix|foreach)\b/),
  has('=', { makefile: 2 }, /^[A-Z][A-Z0-9_]* *[:?+]= /m),
  has('var.', { hcl: 3 }, /\bvar\.\w/),
  has('source', { hcl: 3 }, /source *= "(?:hashicorp|registry\.terraform\.io|git::|\.\/)/),
  has('def ', { scala: 4 }, /\bdef \w+(?:\[[^\]\n]*\])?(?:\([^)\n]*\))*: [A-Z][\w[\]]* =/),
  has('[', { scala: 2 }, /\b(?:List|Seq|Option|Future|Either|Vector|Array)\[[A-Z]/),
  has('=>', { scala: 2 }, /\bcase [^\n]+ =>/),
  has('implicit ', { scala: 4 }),
  has('extends App', { scala: 4 }),
  has('<- function', { r: 6 }),
  has('%>%', { r: 5 }),
  has('|>', { elixir: 2, r: 1 }),
  has('(', { r: 3 }, /\b(?:data\.frame|ggplot|c\(\d|rnorm|summary|lapply|sapply|read\.csv)\(/),
  has('TRUE', { r: 1 }, /\bTRUE\b/),
  has('{:', { elixir: 4 }, /\{:(?:ok|error)\b/),
  has('IO.', { elixir: 4 }, /\bIO\.(?:puts|inspect)\b/),
  has('@', { elixir: 4 }, /^\s*@(?:moduledoc|doc|spec|impl)\b/m),
  has('fn ', { elixir: 3 }, /\bfn [\w, ()]*->/),
  has('@import(', { zig: 5 }),
  has('std.', { zig: 4 }, /\bstd\.(?:debug|mem|heap|fs|io|fmt|ArrayList)\b/),
  has('comptime', { zig: 4 }),
  has('errdefer', { zig: 5 }),
  has('!void', { zig: 4 }),
  has('.{', { zig: 3 }, /[(,= ]\.\{/),
  has(') |', { zig: 3 }, /\b(?:for|while) \([^)\n]*\) \|\w+(?:, ?\w+)?\|/),
  has('var ', { zig: 3 }, /\bvar \w+: [iu]\d+ = /),
  has('[]const ', { zig: 4 }),
  has('@as(', { zig: 4 }),
  has('test "', { zig: 3 }, /^test "[^"\n]*" \{$/m),
];
