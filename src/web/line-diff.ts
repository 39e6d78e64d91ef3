/** One line of a diff: kept in both texts, removed from the first, or added in the second. */
export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** Past this many lines on either side a diff is not computed: the page says so. */
export const DIFF_MAX_LINES = 10_000;
/** Past this many changed lines (after the common start and end) a diff is given up. */
export const DIFF_MAX_EDITS = 1_000;
/**
 * The most steps the search may take (a diagonal tried, or a line compared along one):
 * enough for real edits, short enough not to hold the event loop long. Anyone who may read
 * a paste may ask for its diff, so its cost is bounded whatever the two texts are.
 */
export const DIFF_MAX_STEPS = 3_000_000;

/**
 * The line diff of two texts (README, Revisions): the shortest edit script by Myers'
 * algorithm, common lines included. Lines are numbered first (equal lines, equal numbers),
 * so comparing two is one integer comparison however long they are, and the common start
 * and end are set aside before the search. Null when either text has more than
 * DIFF_MAX_LINES lines, or the rest differs in more than `maxEdits` lines, or finding the
 * script would take more than DIFF_MAX_STEPS steps: the page then shows no diff rather
 * than hold the event loop. The search keeps, for each number of edits d, only the 2d+1
 * diagonals it reached, so its memory is (d+1)² numbers at most (4 MB for 1,000 edits).
 */
export function lineDiff(before: string, after: string, maxEdits = DIFF_MAX_EDITS): DiffLine[] | null {
  const a = splitLines(before);
  const b = splitLines(after);
  if (a.length > DIFF_MAX_LINES || b.length > DIFF_MAX_LINES) return null;
  const ids = new Map<string, number>();
  const number = (lines: string[]): Int32Array => {
    const out = new Int32Array(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      let id = ids.get(line);
      if (id === undefined) ids.set(line, (id = ids.size));
      out[i] = id;
    }
    return out;
  };
  const x0 = number(a);
  const y0 = number(b);
  // The common start and end.
  let start = 0;
  while (start < a.length && start < b.length && x0[start] === y0[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && x0[a.length - 1 - end] === y0[b.length - 1 - end]) end++;
  const middle = editScript(x0.subarray(start, a.length - end), y0.subarray(start, b.length - end), maxEdits);
  if (middle === null) return null;
  const out: DiffLine[] = [];
  for (let i = 0; i < start; i++) out.push({ op: ' ', text: a[i] as string });
  let i = start;
  let j = start;
  for (const op of middle) {
    if (op === ' ') {
      j++;
      out.push({ op, text: a[i++] as string });
    } else if (op === '-') out.push({ op, text: a[i++] as string });
    else out.push({ op, text: b[j++] as string });
  }
  for (let k = a.length - end; k < a.length; k++) out.push({ op: ' ', text: a[k] as string });
  return out;
}

/** Myers' shortest edit script from `a` to `b`, as one op per line; null past the bounds. */
function editScript(a: Int32Array, b: Int32Array, maxEdits: number): DiffLine['op'][] | null {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > maxEdits) return null;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds v[-d..d] as it was before round d (diagonals -d..d: 2d+1 numbers).
  const trace: Int32Array[] = [];
  let steps = 0;
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number))
          ? (v[offset + k + 1] as number)
          : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      const from = x;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      steps += 1 + x - from;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (steps > DIFF_MAX_STEPS) return null;
  }
  if (found < 0) return null;
  // Walk the trace back from the end, collecting the script in reverse.
  const out: DiffLine['op'][] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d] as Int32Array;
    const at = (k: number): number => vd[k + d] as number;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      out.push(' ');
      x--;
      y--;
    }
    out.push(down ? '+' : '-');
    if (down) y--;
    else x--;
  }
  while (x > 0 && y > 0) {
    out.push(' ');
    x--;
    y--;
  }
  return out.reverse();
}

/** The lines of a text; a final newline ends the last line rather than starting one. */
function splitLines(s: string): string[] {
  if (s === '') return [];
  const lines = s.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
