/**
 * Metrics in the Prometheus text exposition format, version 0.0.4 (README, Metrics), with no
 * dependency: counters, gauges and histograms, each either kept here (inc, set, observe) or
 * read at scrape time from the object that already counts (collect). Label values are
 * escaped; callers keep them bounded (route patterns, never paths or hashes).
 */
type Labels = readonly string[];

/** Series are keyed by their label values joined with NUL, which no label value holds. */
const keyOf = (labels: Labels): string =>
  labels.length === 0 ? '' : labels.length === 1 ? (labels[0] as string) : labels.join('\0');

const escapeLabel = (v: string): string => v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
const escapeHelp = (v: string): string => v.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));

function labelText(names: Labels, values: Labels, extra = ''): string {
  const parts = names.map((n, i) => `${n}="${escapeLabel(values[i] ?? '')}"`);
  if (extra !== '') parts.push(extra);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

const num = (v: number): string => (Number.isFinite(v) ? String(v) : v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN');

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  lines(): string[];
}

/** A value per label set, kept here or read when scraped. */
class Valued implements Family {
  readonly #series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
    readonly labelNames: Labels,
    private readonly collect?: () => readonly (readonly [Labels, number])[],
  ) {}

  protected add(labels: Labels, n: number, set: boolean): void {
    const s = this.series(labels);
    s.value = set ? n : s.value + n;
  }

  /** The series of these label values, made at 0 the first time. */
  protected series(labels: Labels): { labels: Labels; value: number } {
    const key = keyOf(labels);
    let s = this.#series.get(key);
    if (s === undefined) this.#series.set(key, (s = { labels: [...labels], value: 0 }));
    return s;
  }

  lines(): string[] {
    const series =
      this.collect !== undefined ? this.collect() : [...this.#series.values()].map((s) => [s.labels, s.value] as const);
    return series.map(([labels, value]) => `${this.name}${labelText(this.labelNames, labels)} ${num(value)}`);
  }
}

export class Counter extends Valued {
  inc(labels: Labels = [], n = 1): void {
    this.add(labels, n, false);
  }

  /** One series, to count without looking it up each time (the request path). */
  child(labels: Labels): { inc(n?: number): void } {
    const s = this.series(labels);
    return { inc: (n = 1) => void (s.value += n) };
  }
}

export class Gauge extends Valued {
  set(value: number, labels: Labels = []): void {
    this.add(labels, value, true);
  }
}

export class Histogram implements Family {
  readonly type = 'histogram';
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: Labels,
    /** Upper bounds, ascending; +Inf is added. */
    readonly buckets: readonly number[],
  ) {}

  observe(value: number, labels: Labels = []): void {
    this.child(labels).observe(value);
  }

  /** One series, to observe without looking it up each time (the request path). */
  child(labels: Labels): { observe(value: number): void } {
    const key = keyOf(labels);
    let s = this.#series.get(key);
    if (s === undefined) {
      s = { labels: [...labels], counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    const series = s;
    const buckets = this.buckets;
    return {
      observe: (value) => {
        // Counted in its own bucket only; the exposition sums them into cumulative ones.
        let i = 0;
        while (i < buckets.length && value > (buckets[i] as number)) i++;
        if (i < buckets.length) (series.counts[i] as number)++;
        series.sum += value;
        series.count++;
      },
    };
  }

  lines(): string[] {
    const out: string[] = [];
    for (const s of this.#series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i] as number;
        out.push(`${this.name}_bucket${labelText(this.labelNames, s.labels, `le="${num(le)}"`)} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${labelText(this.labelNames, s.labels, 'le="+Inf"')} ${s.count}`);
      out.push(`${this.name}_sum${labelText(this.labelNames, s.labels)} ${num(s.sum)}`);
      out.push(`${this.name}_count${labelText(this.labelNames, s.labels)} ${s.count}`);
    }
    return out;
  }
}

/** One server's metrics (built in server.ts: two servers in one process share none). */
export class Metrics {
  readonly #families: Family[] = [];

  counter(
    name: string,
    help: string,
    labelNames: Labels = [],
    collect?: () => readonly (readonly [Labels, number])[],
  ): Counter {
    return this.#add(new Counter(name, help, 'counter', labelNames, collect));
  }

  gauge(
    name: string,
    help: string,
    labelNames: Labels = [],
    collect?: () => readonly (readonly [Labels, number])[],
  ): Gauge {
    return this.#add(new Gauge(name, help, 'gauge', labelNames, collect));
  }

  histogram(name: string, help: string, labelNames: Labels, buckets: readonly number[]): Histogram {
    return this.#add(new Histogram(name, help, labelNames, buckets));
  }

  #add<F extends Family>(family: F): F {
    if (this.#families.some((f) => f.name === family.name)) throw new Error(`metric ${family.name} defined twice`);
    this.#families.push(family);
    return family;
  }

  /** The exposition: HELP and TYPE, then each series, for every family. */
  expose(): string {
    let out = '';
    for (const f of this.#families) {
      out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
      for (const line of f.lines()) out += `${line}\n`;
    }
    return out;
  }
}

/** A collected value without labels. */
export const single = (value: number): readonly (readonly [Labels, number])[] => [[[], value]];
