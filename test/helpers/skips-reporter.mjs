import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * A node:test reporter beside the usual one (package.json's test script): what was skipped and
 * why, per file, and the Debian packages named in the reasons (test/helpers/tools.ts writes them).
 * Under test/helpers/run-tests.ts the list goes to the file it names, printed after the coverage
 * report; else here. Plain JavaScript: node loads reporters before tsx.
 */
export default async function* skipsReporter(source) {
  const skipped = new Map();
  for await (const { type, data } of source) {
    if ((type !== 'test:pass' && type !== 'test:fail') || !data.skip) continue;
    const file = data.file === undefined ? '?' : relative(process.cwd(), data.file);
    const why = data.skip === true ? 'skipped' : data.skip;
    const kind = data.details?.type === 'suite' ? 'suite' : 'test';
    const key = JSON.stringify([file, why, kind]);
    skipped.set(key, (skipped.get(key) ?? 0) + 1);
  }
  if (skipped.size === 0) return;
  let total = 0;
  const lines = [];
  const packages = new Set();
  for (const [key, n] of skipped) {
    const [file, why, kind] = JSON.parse(key);
    total += n;
    for (const m of why.matchAll(/\(apt-get install ([^)\s]+)\)/g)) packages.add(m[1]);
    lines.push(`  ${file}: ${n} ${kind}${n === 1 ? '' : 's'}, ${why}`);
  }
  lines.sort();
  if (packages.size > 0) lines.push(`  to run them: apt-get install ${[...packages].sort().join(' ')}`);
  const text = `skipped ${total}:\n${lines.join('\n')}\n`;
  const to = process.env.TEST_SKIPS_FILE;
  if (to) appendFileSync(to, text);
  else yield text;
}
