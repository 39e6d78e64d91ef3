/** One line of a diff: kept in both texts, removed from the first, or added in the second. */
export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** Past this many lines on either side a diff is not computed: the page says so. */
export const DIFF_MAX_LINES = 10_000;

/**
 * The line diff of two texts (README, Revisions): the shortest edit script by Myers'
 * algorithm (O((N+M)·D) time, D the number of changed lines), common lines included.
 * Null when either text has more than DIFF_MAX_LINES lines, or the edit would take more
 * than `maxEdits` steps: the page then shows no diff rather than holding the event loop.
 */
export function lineDiff(before: string, after: string, maxEdits = 4_000): DiffLine[] | null {
  const a = splitLines(before);
  const b = splitLines(after);
  if (a.length > DIFF_MAX_LINES || b.length > DIFF_MAX_LINES) return null;
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number)) ? (v[offset + k + 1] as number) : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return null;
  // Walk the trace back from the end, collecting the script in reverse.
  const out: DiffLine[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (vd[offset + k - 1] as number) < (vd[offset + k + 1] as number));
    const prevK = down ? k + 1 : k - 1;
    const prevX = vd[offset + prevK] as number;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      out.push({ op: ' ', text: a[--x] as string });
      y--;
    }
    if (down) out.push({ op: '+', text: b[--y] as string });
    else out.push({ op: '-', text: a[--x] as string });
  }
  while (x > 0 && y > 0) {
    out.push({ op: ' ', text: a[--x] as string });
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
