import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SPANS, highlight } from '../../src/web/highlight.ts';
import { LANGUAGES } from '../../src/paste/language.ts';

const CLASSES = ['kw', 'str', 'com', 'num', 'fn', 'attr', 'op', 'add', 'del', 'hunk'];
const TAG = new RegExp(`<span class="tk-(?:${CLASSES.join('|')})">|</span>`, 'g');

function unescape(html: string): string {
  return html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The line's text with the highlighting taken off again. */
const plain = (html: string): string => unescape(html.replace(TAG, ''));

/** The line's spans as [class, text] pairs. */
function tokens(html: string): [string, string][] {
  return [...html.matchAll(/<span class="tk-(\w+)">(.*?)<\/span>/g)].map((m) => [m[1] ?? '', unescape(m[2] ?? '')]);
}

/** One highlighted line is safe: only our own flat span tags, balanced, and all text escaped. */
function assertSafeLine(html: string, source: string): void {
  assert.doesNotMatch(html, /<script|<img/i);
  assert.equal(html.replace(TAG, '').search(/[<>]/), -1, `stray markup in ${html}`);
  let depth = 0;
  for (const [tag] of html.matchAll(TAG)) {
    depth += tag === '</span>' ? -1 : 1;
    assert.ok(depth === 0 || depth === 1, `unbalanced or nested spans in ${html}`);
  }
  assert.equal(depth, 0, `unclosed span in ${html}`);
  assert.equal(plain(html), source);
}

function assertSafe(code: string, language: string): string[] {
  const out = highlight(code, language);
  const lines = code.split('\n').map((l) => l.replace(/\r$/, ''));
  assert.equal(out.length, lines.length);
  out.forEach((html, i) => {
    assertSafeLine(html, lines[i] ?? '');
  });
  return out;
}

const PAYLOADS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '&amp;',
  `'&quot;&#39;<>\\ </span><span class="tk-kw">`,
];

/** Places a payload can land: plain code, strings, comments, tags, and tokens that span lines. */
const CONTEXTS = [
  'P',
  '"P"',
  "'P'",
  '`P`',
  'x = "P"; // P',
  '# P',
  '-- P',
  '/* P */',
  '<!-- P -->',
  '<a title="P">P</a>',
  '<P',
  'key: P',
  '"key": "P"',
  '[P]',
  '+P',
  '-P',
  '@@ -1 +1 @@ P',
  '**P** `P`',
  's = """\nP\n"""',
  '/* start\nP\nend */',
  '<!--\nP\n-->',
  '<script>\nP\n</script>',
  '<style>\nP\n</style>',
  '<a title="\nP\n">',
  'cat <<EOF\nP\nEOF',
  'x = `\nP\n`',
  '--[[\nP\n]]',
  '```\nP\n```',
  'r = /P/g; y = a / P',
];

describe('highlight escaping', () => {
  for (const language of [...LANGUAGES, 'no-such-language']) {
    it(`highlight escapes hostile input in every context for ${language}`, () => {
      for (const payload of PAYLOADS) {
        for (const context of CONTEXTS) assertSafe(context.replaceAll('P', payload), language);
      }
    });
  }

  it('highlight returns text and unknown languages escaped, with no spans', () => {
    const code = '<b>bold</b> & "quoted" \'single\'\nif (x) { return 1; }';
    const expected = ['&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; &#39;single&#39;', 'if (x) { return 1; }'];
    assert.deepEqual(highlight(code, 'text'), expected);
    assert.deepEqual(highlight(code, 'cobol'), expected);
    assert.deepEqual(highlight(code, '__proto__'), expected);
  });
});

describe('highlight lines', () => {
  it('highlight returns one string per input line, with no carriage returns', () => {
    for (const code of ['', 'a', 'a\n', 'a\nb', 'a\r\nb\r\n', '\n\n', '/* a\r\nb */\r\n']) {
      for (const language of LANGUAGES) {
        const out = highlight(code, language);
        assert.equal(out.length, code.split('\n').length, `${language}: ${JSON.stringify(code)}`);
        assert.ok(out.every((l) => !l.includes('\r')));
      }
    }
  });

  it('highlight closes and reopens a block comment on every line it spans', () => {
    const out = assertSafe('int a; /* one\ntwo\nthree */ int b;', 'c');
    assert.deepEqual(out.map(tokens), [
      [
        ['kw', 'int'],
        ['com', '/* one'],
      ],
      [['com', 'two']],
      [
        ['com', 'three */'],
        ['kw', 'int'],
      ],
    ]);
  });

  it('highlight closes and reopens multi-line strings, template literals and raw strings', () => {
    assert.deepEqual(assertSafe('s = """a\nb"""\nt = 1', 'python').map(tokens), [
      [['str', '"""a']],
      [['str', 'b"""']],
      [['num', '1']],
    ]);
    // highlight.js leaves a template literal's substitution uncoloured.
    assert.deepEqual(assertSafe('const t = `a\n${b}`;', 'javascript').map(tokens), [
      [
        ['kw', 'const'],
        ['str', '`a'],
      ],
      [['str', '`']],
    ]);
    assert.deepEqual(assertSafe('s := `a\nb`', 'go').map(tokens), [[['str', '`a']], [['str', 'b`']]]);
    assert.deepEqual(assertSafe('var s = @"a\nb";', 'csharp').map(tokens), [
      [
        ['kw', 'var'],
        ['str', '@"a'],
      ],
      [['str', 'b"']],
    ]);
  });

  it('highlight keeps nested block comments open until the outer one closes', () => {
    for (const language of ['rust', 'kotlin', 'swift']) {
      const out = assertSafe('/* a /* b */\nstill */ x', language);
      assert.deepEqual(out.map(tokens), [[['com', '/* a /* b */']], [['com', 'still */']]]);
    }
  });

  it('highlight runs a string left open on to the next lines, each line balanced', () => {
    // highlight.js, told to ignore what its grammar calls illegal, keeps the string open.
    for (const language of ['c', 'javascript', 'python']) {
      assert.deepEqual(assertSafe('x = "open\ny = 2', language).map(tokens), [[['str', '"open']], [['str', 'y = 2']]]);
    }
  });

  it('highlight treats the language name case-insensitively', () => {
    assert.deepEqual(highlight('const x = 1;', 'JavaScript'), highlight('const x = 1;', 'javascript'));
    assert.match(highlight('FROM node:20', 'Dockerfile')[0] ?? '', /tk-kw/);
  });
});

/**
 * The languages the server once highlighted with lexers of its own, now by highlight.js: the
 * tokens each one's grammar classes, as our tk-* classes (web/highlight-library.ts).
 */
describe('highlight classes', () => {
  const first = (code: string, language: string): [string, string][] => tokens(highlight(code, language)[0] ?? '');

  it('highlight marks JavaScript keywords, strings, comments, calls and regular expressions', () => {
    assert.deepEqual(first('const x = "s"; // note', 'javascript'), [
      ['kw', 'const'],
      ['str', '"s"'],
      ['com', '// note'],
    ]);
    // A slash after an operand divides; after `?` it opens a regular expression.
    assert.deepEqual(first('app.get(re.test(s) ? /a\\/[/]b/gi : n / 2 / d)', 'javascript'), [
      ['fn', 'get'],
      ['fn', 'test'],
      ['str', '/a\\/[/]b/gi'],
      ['num', '2'],
    ]);
    assert.deepEqual(first('class Cache extends Map {}', 'javascript'), [
      ['kw', 'class'],
      ['fn', 'Cache'],
      ['kw', 'extends'],
      ['fn', 'Map'],
    ]);
    assert.deepEqual(first('x = [1] / 2; y = / unclosed', 'javascript'), [
      ['num', '1'],
      ['num', '2'],
    ]);
  });

  it('highlight marks a JavaScript shebang line', () => {
    assert.deepEqual(highlight('#!/usr/bin/env node\nx = /re/;', 'javascript').map(tokens), [
      [['kw', '#!/usr/bin/env node']],
      [['str', '/re/']],
    ]);
  });

  it('highlight marks TypeScript decorators, properties, types and keywords', () => {
    assert.deepEqual(first('@Input() name: string;', 'typescript'), [
      ['kw', '@Input'],
      ['attr', 'name'],
      ['fn', 'string'],
    ]);
    assert.deepEqual(highlight('interface A { b: number }\ntype T = A | null;', 'typescript').map(tokens), [
      [
        ['kw', 'interface'],
        ['attr', 'b'],
        ['fn', 'number'],
      ],
      [
        ['kw', 'type'],
        ['kw', 'null'],
      ],
    ]);
  });

  it('highlight marks Python definitions, prefixed strings, decorators and comments', () => {
    assert.deepEqual(first('def f(): return rb"x" + f\'{y}\'  # done', 'python'), [
      ['kw', 'def'],
      ['fn', 'f'],
      ['kw', 'return'],
      ['str', 'rb"x"'],
      ['str', "f'"],
      ['str', "'"],
      ['com', '# done'],
    ]);
    assert.deepEqual(first('@app.route("/")', 'python'), [
      ['kw', '@app.route('],
      ['str', '"/"'],
      ['kw', ')'],
    ]);
  });

  it('highlight marks C preprocessor lines, wide strings and hexadecimal numbers', () => {
    assert.deepEqual(first('#include <stdio.h>', 'c'), [
      ['kw', '#include '],
      ['str', '<stdio.h>'],
    ]);
    assert.deepEqual(first('char *s = L"w"; int n = 0x1F;', 'c'), [
      ['kw', 'char'],
      ['str', 'L"w"'],
      ['kw', 'int'],
      ['num', '0x1F'],
    ]);
  });

  it('highlight marks C++ templates, Java, C#, Kotlin, Swift and Go declarations', () => {
    assert.deepEqual(first('template<typename T> int f() { return 0; }', 'cpp'), [
      ['kw', 'template'],
      ['kw', 'typename'],
      ['kw', 'int'],
      ['fn', 'f'],
      ['kw', 'return'],
      ['num', '0'],
    ]);
    assert.deepEqual(first('public static void main(String[] args) { System.out.println("hi"); } // end', 'java'), [
      ['kw', 'public'],
      ['kw', 'static'],
      ['kw', 'void'],
      ['fn', 'main'],
      ['str', '"hi"'],
      ['com', '// end'],
    ]);
    assert.deepEqual(first('namespace App { public record P(int X); }', 'csharp'), [
      ['kw', 'namespace'],
      ['fn', 'App'],
      ['kw', 'public'],
      ['kw', 'record'],
      ['fn', 'P'],
      ['fn', 'int'],
    ]);
    assert.deepEqual(first('data class User(val name: String = "x")', 'kotlin'), [
      ['kw', 'data'],
      ['kw', 'class'],
      ['fn', 'User'],
      ['kw', 'val'],
      ['str', '"x"'],
    ]);
    assert.deepEqual(first('let s: String? = nil // swift', 'swift'), [
      ['kw', 'let'],
      ['kw', 'String'],
      ['op', '='],
      ['kw', 'nil'],
      ['com', '// swift'],
    ]);
    assert.deepEqual(first('func main() { fmt.Println("x") }', 'go'), [
      ['kw', 'func'],
      ['fn', 'main'],
      ['str', '"x"'],
    ]);
  });

  it('highlight marks Rust attributes, lifetimes, macros and char literals', () => {
    assert.deepEqual(first("#[derive(Debug)] fn f<'a>(s: &'a str) -> char { println!(\"{}\", '\\n') }", 'rust'), [
      ['kw', '#[derive(Debug)]'],
      ['kw', 'fn'],
      ['fn', 'f'],
      ['str', "'a"],
      ['str', "'a"],
      ['kw', 'str'],
      ['kw', 'char'],
      ['fn', 'println!'],
      ['str', '"{}"'],
      ['str', "'\\n'"],
    ]);
  });

  it('highlight marks SQL keywords in any case, comments and doubled quotes', () => {
    assert.deepEqual(first("select 'it''s' FROM t -- why", 'sql'), [
      ['kw', 'select'],
      ['str', "'it''s'"],
      ['kw', 'FROM'],
      ['com', '-- why'],
    ]);
    assert.deepEqual(first('SELECT COUNT(*) FROM users', 'sql'), [
      ['kw', 'SELECT'],
      ['fn', 'COUNT'],
      ['op', '*'],
      ['kw', 'FROM'],
    ]);
  });

  it('highlight marks shell variables, builtins and comments only after a space', () => {
    assert.deepEqual(first('echo "$HOME" $1 ${PATH:-x} a#b # c', 'bash'), [
      ['fn', 'echo'],
      ['str', '"'],
      ['attr', '$HOME'],
      ['str', '"'],
      ['attr', '$1'],
      ['attr', '${PATH:-x}'],
      ['com', '# c'],
    ]);
  });

  it('highlight keeps a shell here-document a string up to its terminator', () => {
    const out = assertSafe('cat <<-EOF > f\n\tif $x\n\tEOF\nif true; then :; fi', 'bash');
    assert.deepEqual(out.map(tokens), [
      [
        ['fn', 'cat'],
        ['str', 'EOF > f'],
      ],
      [['str', '\tif $x']],
      [['str', '\tEOF']],
      [
        ['kw', 'if'],
        ['kw', 'true'],
        ['kw', 'then'],
        ['kw', 'fi'],
      ],
    ]);
  });

  it('highlight marks PHP tags and variables, and Ruby symbols and instance variables', () => {
    assert.deepEqual(first('<?php $x = $this->name; ?>', 'php'), [
      ['kw', '<?php'],
      ['attr', '$x'],
      ['attr', '$this'],
      ['kw', '?>'],
    ]);
    assert.deepEqual(first('has_many :items; @count = 0; puts "#{x}"', 'ruby'), [
      ['str', ':items'],
      ['attr', '@count'],
      ['num', '0'],
      ['str', '"'],
      ['str', '"'],
    ]);
  });

  it('highlight marks HTML tags, attributes, values, entities and comments', () => {
    assert.deepEqual(first('<!DOCTYPE html><a href="/x" id=top data-x>&amp; &copy</a><!-- c -->', 'html'), [
      ['kw', '<!DOCTYPE html>'],
      ['fn', 'a'],
      ['attr', 'href'],
      ['str', '"/x"'],
      ['attr', 'id'],
      ['str', 'top'],
      ['attr', 'data-x'],
      ['str', '&amp;'],
      ['fn', 'a'],
      ['com', '<!-- c -->'],
    ]);
  });

  it('highlight highlights HTML script and style bodies as JavaScript and CSS', () => {
    const out = assertSafe('<script>\nif (a < b) f("</p>");\n</script><style>p { color: red }</style>', 'html');
    assert.deepEqual(out.map(tokens), [
      [['fn', 'script']],
      [
        ['kw', 'if'],
        ['fn', 'f'],
        ['str', '"</p>"'],
      ],
      [
        ['fn', 'script'],
        ['fn', 'style'],
        ['fn', 'p'],
        ['attr', 'color'],
        ['fn', 'style'],
      ],
    ]);
  });

  it('highlight marks XML prologs, names with prefixes and attribute values that span lines', () => {
    const out = assertSafe('<?xml version="1.0"?>\n<a:b x:y="1\n2"/><![CDATA[<raw>\n]]>', 'xml');
    assert.deepEqual(out.map(tokens), [
      [
        ['kw', '<?xml version='],
        ['str', '"1.0"'],
        ['kw', '?>'],
      ],
      [
        ['fn', 'a:b'],
        ['attr', 'x:y'],
        ['str', '"1'],
      ],
      [['str', '2"']],
      [],
    ]);
  });

  it('highlight marks CSS selectors, properties, colours, at-rules and !important', () => {
    assert.deepEqual(first('@media print { #main a:hover { color: #abc !important; margin: -2px } }', 'css'), [
      ['kw', '@media'],
      ['fn', '#main'],
      ['fn', 'a:hover'],
      ['attr', 'color'],
      ['num', '#abc'],
      ['kw', '!important'],
      ['attr', 'margin'],
      ['num', '2px'],
    ]);
  });

  it('highlight marks JSON keys apart from string values', () => {
    assert.deepEqual(first('{"a": "b", "n": -1.5e3, "ok": true, "x": null}', 'json'), [
      ['attr', '"a"'],
      ['str', '"b"'],
      ['attr', '"n"'],
      ['num', '-1.5e3'],
      ['attr', '"ok"'],
      ['kw', 'true'],
      ['attr', '"x"'],
      ['kw', 'null'],
    ]);
  });

  it('highlight marks YAML keys, list items, values and comments', () => {
    assert.deepEqual(highlight('- name: web # first\n  url: http://x#y\n  base: &b yes', 'yaml').map(tokens), [
      [
        ['kw', '-'],
        ['attr', 'name:'],
        ['str', 'web'],
        ['com', '# first'],
      ],
      [
        ['attr', 'url:'],
        ['str', 'http://x#y'],
      ],
      [
        ['attr', 'base:'],
        ['str', '&b'],
        ['kw', 'yes'],
      ],
    ]);
  });

  it('highlight marks INI sections, keys and comments, and Dockerfile instructions', () => {
    assert.deepEqual(highlight('[server]\nport = 8080 ; main\nName With Spaces=on', 'ini').map(tokens), [
      [['kw', '[server]']],
      [
        ['attr', 'port'],
        ['num', '8080'],
        ['com', '; main'],
      ],
      [
        ['attr', 'Spaces'],
        ['kw', 'on'],
      ],
    ]);
    assert.deepEqual(highlight('FROM node:20 AS build\n# c\nRUN echo $HOME', 'dockerfile').map(tokens), [
      [
        ['kw', 'FROM'],
        ['num', '20'],
      ],
      [['com', '# c']],
      [
        ['kw', 'RUN'],
        ['fn', 'echo'],
        ['attr', '$HOME'],
      ],
    ]);
  });

  it('highlight marks Markdown headings, code, links, lists and quotes', () => {
    const out = assertSafe(
      '# Title\n- *em* __strong__ `code` [a](b)\n> quote\n```js\nx = 1\n```\n1) end\n---',
      'markdown',
    );
    assert.deepEqual(out.map(tokens), [
      [['kw', '# Title']],
      [
        ['kw', '-'],
        ['str', '`code`'],
        ['str', 'a'],
        ['str', 'b'],
      ],
      [['com', '> quote']],
      [['str', '```js']],
      [['str', 'x = 1']],
      [['str', '```']],
      [['kw', '1) end']],
      [['kw', '---']],
    ]);
  });

  it('highlight marks Lua long comments and long strings across lines', () => {
    assert.deepEqual(assertSafe('--[[ a\nb ]] local s = [[x\ny]]', 'lua').map(tokens), [
      [['com', '--[[ a']],
      [
        ['com', 'b ]]'],
        ['kw', 'local'],
        ['str', '[[x'],
      ],
      [['str', 'y]]']],
    ]);
  });

  it('highlight classes whole diff lines: headers, hunks, additions and removals', () => {
    const diff =
      'diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1,3 +1,2 @@ ctx\n keep\n-gone\n' +
      '\\ No newline at end of file\n+loose\n-loose\nplain';
    assert.deepEqual(assertSafe(diff, 'diff').map(tokens), [
      [['com', 'diff --git a/x b/x']],
      [['com', 'index 1..2']],
      [['com', '--- a/x']],
      [['com', '+++ b/x']],
      [['hunk', '@@ -1,3 +1,2 @@']],
      [],
      [['del', '-gone']],
      [],
      [['add', '+loose']],
      [['del', '-loose']],
      [],
    ]);
  });
});

// Speed is the benchmark's business; these only guard against catastrophic backtracking,
// which would turn each call from milliseconds into minutes and trip the timeout.
describe('highlight on hostile input', { timeout: 60_000 }, () => {
  const MiB = 1 << 20;
  const fill = (text: string): string => text.repeat(Math.ceil(MiB / text.length)).slice(0, MiB);

  it('highlight renders 1 MiB of hostile single-line input losslessly', () => {
    // Each repeats a token start that never completes, or completes a token every few bytes.
    const hostile: readonly (readonly [string, string])[] = [
      ['"', 'javascript'],
      ["'", 'rust'],
      ['=/[', 'javascript'],
      ['/*', 'css'],
      ['#[', 'rust'],
      ['${', 'bash'],
      ['<<A ', 'bash'],
      ['[', 'markdown'],
      ['![a', 'markdown'],
      ['<a b=', 'html'],
      ['&', 'html'],
      ['a: ', 'yaml'],
      ['<', 'xml'],
      ['\\', 'python'],
    ];
    for (const [unit, language] of hostile) {
      const input = fill(unit);
      const lines = highlight(input, language);
      assert.equal(lines.length, 1, `${language}: ${unit}`);
      assert.equal(plain(lines[0] as string), input, `${language}: ${unit}`);
    }
  });
});

describe('the span budget', () => {
  const spans = (lines: string[]): number => lines.join('\n').split('<span class="tk-').length - 1;

  it(`gives a text at most ${MAX_SPANS} spans, however dense, and keeps all of it`, () => {
    // A number and a string take turns, two spans every three characters: highlight.js's
    // head (LIBRARY_MAX_CHARS) bounds them below the budget, which highlight-library.test.ts
    // shows cutting in.
    for (const [text, language] of [
      [`${'[1,"",'.repeat(20)}\n`.repeat(1_000), 'json'],
      [`${'1"",'.repeat(30)}\n`.repeat(1_000), 'javascript'],
      [`${'<a>&amp;'.repeat(10)}\n`.repeat(1_000), 'html'],
    ] as const) {
      const lines = highlight(text, language);
      const n = spans(lines);
      assert.ok(n > 1_000 && n <= MAX_SPANS, `${language}: ${n} spans`);
      assert.equal(lines.map(plain).join('\n'), text, `${language}: the text is all there`);
      for (const line of lines) assertSafeLine(line, plain(line));
    }
  });

  it('colours a long file up to its budget: its last lines are plain', () => {
    const lines = highlight('const a = "s"; // c\n'.repeat(10_000), 'javascript');
    assert.match(lines[0] as string, /tk-kw/);
    assert.equal(lines.at(-2), 'const a = &quot;s&quot;; // c');
  });
});
