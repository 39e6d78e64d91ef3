import type { Class, LineWriter } from './highlight-writer.ts';

/** The lexer for unified diffs, which classes whole lines. */

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const DIFF_META =
  /^(?:\\ |diff |index |--- |\+\+\+ |new file mode|deleted file mode|old mode|new mode|similarity index|rename from|rename to|Binary files|Index: |={3,}$)/;

/**
 * Classes a whole diff line. Inside a hunk the line counts in its `@@` header say where it
 * ends, so a removed line that starts `-- ` is not mistaken for a `---` file header.
 */
export function diffLine(line: string, st: { oldLeft: number; newLeft: number }, out: LineWriter): void {
  const hunk = HUNK.exec(line);
  const first = line.charAt(0);
  let cls: Class | undefined;
  if (hunk !== null) {
    st.oldLeft = Number(hunk[1] ?? 1);
    st.newLeft = Number(hunk[2] ?? 1);
    cls = 'hunk';
  } else if (st.oldLeft > 0 || st.newLeft > 0) {
    if (first !== '+' && first !== '\\') st.oldLeft--;
    if (first !== '-' && first !== '\\') st.newLeft--;
    cls = first === '+' ? 'add' : first === '-' ? 'del' : first === '\\' ? 'com' : undefined;
  } else {
    cls = DIFF_META.test(line) ? 'com' : first === '+' ? 'add' : first === '-' ? 'del' : undefined;
  }
  out.to(cls, line.length);
}
