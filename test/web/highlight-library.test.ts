import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import hljs from '#highlight.js';
import { KNOWN_LANGUAGES, LANGUAGES, languageRow } from '../../src/paste/language.ts';
import { HIGHLIGHT_JS_VERSION, LANGUAGE_TABLE } from '../../src/paste/language-table.ts';
import {
  LIBRARY_MAX_CHARS,
  LIBRARY_SLICE_CHARS,
  MAX_SPANS,
  highlight,
  highlightSteps,
} from '../../src/web/highlight.ts';
import { libraryLines } from '../../src/web/highlight-library.ts';

const TAG = /<span class="tk-(?:kw|str|com|num|fn|attr|op|add|del|hunk)">|<\/span>/g;
const unescape = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Only our flat spans, balanced, every other character escaped, and the text unchanged. */
function assertSafe(code: string, language: string): string[] {
  const out = highlight(code, language);
  const lines = code.split('\n').map((l) => l.replace(/\r$/, ''));
  assert.equal(out.length, lines.length, language);
  out.forEach((html, i) => {
    assert.equal(html.replace(TAG, '').search(/[<>]/), -1, `${language}: stray markup in ${html}`);
    let depth = 0;
    for (const [tag] of html.matchAll(TAG)) {
      depth += tag === '</span>' ? -1 : 1;
      assert.ok(depth === 0 || depth === 1, `${language}: nested spans in ${html}`);
    }
    assert.equal(depth, 0, `${language}: unclosed span in ${html}`);
    assert.equal(unescape(html.replace(TAG, '')), lines[i], language);
  });
  return out;
}

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  `'&quot;&#39;<>\\ </span><span class="tk-kw">`,
  '/* "\n<b>\n*/ `\n${x}\n` <<EOF\n</span>\nEOF\r\n# \u202e done',
  '"""\n<x>\n""" {{ a }} <% b %> <?php c ?>',
];

describe('highlight through highlight.js', () => {
  it('escapes hostile input, keeps it whole and balances every line, for every known language', () => {
    for (const language of KNOWN_LANGUAGES) for (const code of HOSTILE) assertSafe(code, language);
  });

  it('colours the languages detection added', () => {
    for (const [language, code] of [
      ['toml', 'port = 8080 # c'],
      ['haskell', 'main = putStrLn "hi"'],
      ['hcl', 'ami = "x"'],
      ['zig', 'const x = 1;'],
      ['elixir', 'def f, do: :ok'],
    ] as const) {
      assert.match(assertSafe(code, language).join('\n'), /<span class="tk-/, language);
    }
  });

  it('gives a text at most its budget of spans, then the rest of it as plain escaped text', () => {
    // A number and a string take turns: two spans every three characters.
    const line = '1""'.repeat(30);
    const out = libraryLines(`${line}\n`.repeat(20), 'zig', 21, 100) ?? [];
    assert.equal(out.join('\n').split('<span class="tk-').length - 1, 100);
    assert.equal(out.at(-2), '1&quot;&quot;'.repeat(30));
    assert.ok(MAX_SPANS >= (2 * LIBRARY_MAX_CHARS) / 3, 'the page budget covers the densest head');
  });

  it('stays within a few hundred milliseconds for a page of hostile text', () => {
    for (const language of ['perl', 'haskell', 'powershell', 'latex', 'markdown', 'toml']) {
      const started = performance.now();
      highlight('{[(<"\'`$@#\\'.repeat(10_000), language);
      assert.ok(performance.now() - started < 2000, language);
    }
  });
});

describe('the language table', () => {
  it('is the one scripts/language-table.ts writes from the installed highlight.js', () => {
    assert.equal(HIGHLIGHT_JS_VERSION, hljs.versionString);
    const grammars = new Set(LANGUAGE_TABLE.map((row) => row[3]));
    for (const name of hljs.listLanguages()) assert.ok(grammars.has(name), name);
  });

  it('keeps every name detection answers, and names each alias once', () => {
    for (const name of LANGUAGES) assert.ok(languageRow(name) !== undefined, name);
    const aliases = LANGUAGE_TABLE.flatMap((row) => row[2]);
    assert.equal(new Set(aliases).size, aliases.length);
    for (const alias of aliases) assert.equal(languageRow(alias), undefined, alias);
  });
});

describe('the head highlight.js is given', () => {
  it(`colours up to ${LIBRARY_MAX_CHARS} characters of whole lines and shows the rest plain`, () => {
    const line = 'my $x = 1; # c';
    const count = Math.ceil((LIBRARY_MAX_CHARS * 2) / (line.length + 1));
    const out = assertSafe(`${line}\n`.repeat(count), 'perl');
    const coloured = out.findIndex((l) => !l.includes('<span'));
    assert.equal(coloured, Math.floor(LIBRARY_MAX_CHARS / (line.length + 1)));
    assert.ok(out.slice(coloured, -1).every((l) => l === line));
  });

  it('shows a first line longer than the head plain', () => {
    assert.deepEqual(assertSafe('"'.repeat(LIBRARY_MAX_CHARS + 1), 'perl'), ['&quot;'.repeat(LIBRARY_MAX_CHARS + 1)]);
  });
});

describe('the browser bundle', () => {
  it('colours every language detection names, with the grammars package.json maps for the browser', async () => {
    // Bundled as web/client-asset.ts bundles the page's module: `#highlight.js` is the browser's.
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    const out = esbuild.buildSync({
      stdin: {
        contents: "export { highlight } from './src/web/highlight.ts';",
        resolveDir: fileURLToPath(new URL('../..', import.meta.url)),
        loader: 'ts',
      },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
    });
    const text = (out.outputFiles[0] as { text: string }).text;
    assert.doesNotMatch(text, /lib\/languages\/abnf/, 'the browser gets the common grammars, not all of them');
    const url = `data:text/javascript;base64,${Buffer.from(text).toString('base64')}`;
    const browser = (await import(url)) as { highlight: typeof highlight };
    const markup = new Set(['html', 'xml', 'markdown', 'diff']);
    for (const language of LANGUAGES.filter((l) => l !== 'text')) {
      const code = markup.has(language) ? '# t\n<a href="x">\n+ b' : 'x = 1 # "s" // c -- d\n';
      assert.match(browser.highlight(code, language).join('\n'), /<span class="tk-/, language);
    }
  });
});

describe('highlighting in steps', () => {
  /** The lengths of the texts highlight.js is given while `run` goes, and how often it pauses. */
  function watch(run: () => Generator<void, string[]>): { sizes: number[]; pauses: number; lines: string[] } {
    const sizes: number[] = [];
    const original = hljs.highlight;
    hljs.highlight = (code, options) => {
      sizes.push(code.length);
      return original.call(hljs, code, options);
    };
    try {
      const steps = run();
      let pauses = 0;
      for (let step = steps.next(); ; step = steps.next(), pauses++) {
        if (step.done === true) return { sizes, pauses, lines: step.value };
      }
    } finally {
      hljs.highlight = original;
    }
  }

  it(`gives highlight.js at most ${LIBRARY_SLICE_CHARS} characters at a time, pausing between`, () => {
    const code = 'wordCount = foldr (\\w m -> m) Map.empty . words -- "count"\n'.repeat(1_000);
    const { sizes, pauses, lines } = watch(() => highlightSteps(code, 'haskell'));
    assert.ok(sizes.length >= 4 && sizes.every((n) => n <= LIBRARY_SLICE_CHARS), `${sizes}`);
    assert.equal(pauses, sizes.length - 1);
    assert.deepEqual(lines, highlight(code, 'haskell'));
  });

  it('highlights a slice that ends inside a comment again with the next, as one go would', () => {
    const code = `let a = 1;\n/* open\n${'x = "y";\n'.repeat(800)}*/\n${'let b = "s"; // c\n'.repeat(800)}`;
    const { sizes, lines } = watch(() => highlightSteps(code, 'javascript'));
    assert.ok(
      sizes.some((n) => n > LIBRARY_SLICE_CHARS),
      'the open comment is highlighted whole',
    );
    assert.deepEqual(lines, highlight(code, 'javascript'));
    assert.match(lines[500] ?? '', /^<span class="tk-com">/);
    assert.deepEqual(watch(() => highlightSteps(code, 'javascript', LIBRARY_MAX_CHARS)).sizes.length, 1);
  });
});
