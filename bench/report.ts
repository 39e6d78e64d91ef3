import { cpus, loadavg, totalmem } from 'node:os';
import type { Measure } from './load.ts';

/** The 1-minute load average: on a shared machine, a number well above 0 means the figures are noisy. */
export const loadLine = (): string =>
  `load average (1/5/15 min): ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`;

export function machineLine(): string {
  const cpu = cpus();
  const ram = (totalmem() / 2 ** 30).toFixed(1);
  const node = `node ${process.version}, ${process.platform}`;
  return `machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${ram} GiB RAM, ${node}`;
}

/** What a scenario must reach, relative to the reference measured in the same run. */
export interface Goal {
  minRatio: number;
  /** When set, our p99 may be at most this many times the reference's. */
  maxP99Ratio?: number;
}

export interface Row {
  scenario: string;
  ours: Measure;
  ref: Measure;
  goal: Goal;
}

export function goalText(g: Goal): string {
  return `≥ ${g.minRatio.toFixed(2)}${g.maxP99Ratio !== undefined ? `, p99 ≤ ${g.maxP99Ratio}× ref` : ''}`;
}

/** "pass", or "FAIL" with what missed: the throughput ratio, the p99, or errors. */
export function verdict(r: Row): string {
  const misses: string[] = [];
  if (r.ours.rps / r.ref.rps < r.goal.minRatio) misses.push('req/s');
  if (r.goal.maxP99Ratio !== undefined && r.ours.p99 > r.goal.maxP99Ratio * Math.max(r.ref.p99, 1)) misses.push('p99');
  if (r.ours.non2xx > 0 || r.ours.errors > 0) misses.push('errors');
  return misses.length === 0 ? 'pass' : `FAIL (${misses.join(', ')})`;
}

const num = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/**
 * A Markdown table, so it pastes into bench/README.md as is. `unjudged` replaces every verdict
 * (the goals are ratios to the bare reference: against one that does more, none applies);
 * `sides` names the two columns' servers (ours and the reference, or two backends).
 */
export function table(rows: Row[], unjudged?: string, sides: readonly [string, string] = ['ours', 'ref']): string {
  const [a, b] = sides;
  const head = [
    'scenario',
    `${a} req/s`,
    `${a} p50 ms`,
    `${a} p99 ms`,
    `${b} req/s`,
    `${b} p50 ms`,
    `${b} p99 ms`,
    'ratio',
    'goal',
    'result',
  ];
  const body = rows.map((r) => [
    r.scenario,
    num(r.ours.rps),
    num(r.ours.p50, 1),
    num(r.ours.p99, 1),
    num(r.ref.rps),
    num(r.ref.p50, 1),
    num(r.ref.p99, 1),
    num(r.ours.rps / r.ref.rps, 2),
    goalText(r.goal),
    unjudged ?? verdict(r),
  ]);
  const all = [head, ...body];
  const widths = head.map((_, i) => Math.max(...all.map((row) => (row[i] as string).length)));
  const line = (row: string[]): string =>
    `| ${row
      .map((c, i) => (i === 0 || i >= 8 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join(' | ')} |`;
  const cells = widths.map((w, i) => (i === 0 || i >= 8 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`));
  const rule = `|${cells.join('|')}|`;
  return [line(head), rule, ...body.map(line)].join('\n');
}

/** Least-squares slope of y over x. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num_ = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num_ += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return num_ / den;
}

export const ms = (t: number): string => `${t.toFixed(0)} ms`;
