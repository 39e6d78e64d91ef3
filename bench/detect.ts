// `node --import tsx bench/detect.ts`: language detection measured on the labelled sample
// test/fixtures/detect-sample.json (scripts/detect-sample.ts wrote it), ours against
// highlight.js's highlightAuto; prints the tables bench/README.md keeps.
import { readFileSync } from 'node:fs';
import hljs from '#highlight.js';
import { detectLanguage, LANGUAGES, languageRow } from '../src/paste/language.ts';

interface Snippet {
  language: string;
  source: string;
  licence: string;
  code: string;
}

export const SAMPLE: readonly Snippet[] = JSON.parse(
  readFileSync(new URL('../test/fixtures/detect-sample.json', import.meta.url), 'utf8'),
) as Snippet[];

/** A language as highlight.js names its grammar: it cannot tell HTML from XML, or TOML from INI. */
const grammar = (name: string): string => (name === 'text' ? 'text' : (languageRow(name)?.[3] ?? name));

type Guess = (code: string) => string;

export interface Score {
  correct: number;
  total: number;
  ms: number;
  perLanguage: Map<string, { tp: number; truth: number; said: number }>;
}

export function score(guess: Guess, truthOf: (s: Snippet) => string): Score {
  const perLanguage = new Map<string, { tp: number; truth: number; said: number }>();
  const row = (l: string) => {
    let r = perLanguage.get(l);
    if (r === undefined) perLanguage.set(l, (r = { tp: 0, truth: 0, said: 0 }));
    return r;
  };
  let correct = 0;
  const started = performance.now();
  for (const s of SAMPLE) {
    const truth = truthOf(s);
    const said = guess(s.code);
    row(truth).truth++;
    row(said).said++;
    if (said === truth) {
      correct++;
      row(truth).tp++;
    }
  }
  return { correct, total: SAMPLE.length, ms: performance.now() - started, perLanguage };
}

const ours: Guess = (code) => detectLanguage(code);
const autoOf =
  (subset?: string[]): Guess =>
  (code) => {
    const r = hljs.highlightAuto(code, subset);
    return r.language === undefined || r.language === 'plaintext' ? 'text' : r.language;
  };
const detectable = [...new Set(LANGUAGES.filter((l) => l !== 'text').map(grammar))];

const pct = (n: number, d: number): string => (d === 0 ? '–' : `${((100 * n) / d).toFixed(0)} %`);

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs: [string, Score][] = [
    ['ours (`detectLanguage`)', score(ours, (s) => s.language)],
    [
      'ours, HTML/XML and TOML/INI as one',
      score(
        (c) => grammar(ours(c)),
        (s) => grammar(s.language),
      ),
    ],
    ['`highlightAuto`, all 193 grammars', score(autoOf(), (s) => grammar(s.language))],
    ['`highlightAuto`, our 35 languages only', score(autoOf(detectable), (s) => grammar(s.language))],
  ];
  const languages = new Set(SAMPLE.map((s) => s.language)).size;
  console.log(`${SAMPLE.length} snippets, ${languages} languages\n`);
  console.log('| detector | right | accuracy | prose kept as text | ms per snippet |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [name, s] of runs) {
    const text = s.perLanguage.get('text');
    console.log(
      `| ${name} | ${s.correct} / ${s.total} | ${pct(s.correct, s.total)} | ${text?.tp ?? 0} / ` +
        `${text?.truth ?? 0} (precision ${pct(text?.tp ?? 0, text?.said ?? 0)}) | ${(s.ms / s.total).toFixed(2)} |`,
    );
  }
  const [oursRun, , , autoSubset] = runs.map((r) => r[1]);
  const all = runs[2]?.[1];
  console.log(
    '\n| language | snippets | ours: precision | ours: recall | highlightAuto (all): precision | recall | ' +
      'highlightAuto (ours): precision | recall |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  const names = [...new Set(SAMPLE.map((s) => s.language))];
  for (const l of names) {
    const o = oursRun?.perLanguage.get(l);
    const a = all?.perLanguage.get(grammar(l));
    const b = autoSubset?.perLanguage.get(grammar(l));
    console.log(
      `| ${l} | ${o?.truth ?? 0} | ${pct(o?.tp ?? 0, o?.said ?? 0)} | ${pct(o?.tp ?? 0, o?.truth ?? 0)} | ` +
        `${pct(a?.tp ?? 0, a?.said ?? 0)} | ${pct(a?.tp ?? 0, a?.truth ?? 0)} | ${pct(b?.tp ?? 0, b?.said ?? 0)} ` +
        `| ${pct(b?.tp ?? 0, b?.truth ?? 0)} |`,
    );
  }
}
