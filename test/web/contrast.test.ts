import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CSS_BASE } from '../../src/web/assets/css-base.ts';
import { CSS_COMPONENTS } from '../../src/web/assets/css-components.ts';
import { TOKEN_CLASSES } from '../../src/web/highlight-library.ts';

/** WCAG 2 relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a: string, b: string): number => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};

test('line numbers and placeholders reach 4.5:1 against their background, light and dark', () => {
  // The light theme's variables come first, the dark theme's (prefers-color-scheme) second.
  const all = (name: string): string[] =>
    [...CSS_BASE.matchAll(new RegExp(`--${name}: (#[0-9a-f]{6})`, 'g'))].map((m) => m[1] ?? '');
  const [ln, codeBg, muted, surface] = [all('ln'), all('code-bg'), all('muted'), all('surface')];
  assert.equal(ln.length, 2);
  for (const theme of [0, 1]) {
    assert.ok(
      contrast(ln[theme] ?? '', codeBg[theme] ?? '') >= 4.5,
      `line numbers, theme ${theme}: ${contrast(ln[theme] ?? '', codeBg[theme] ?? '').toFixed(2)}`,
    );
    assert.ok(contrast(muted[theme] ?? '', surface[theme] ?? '') >= 4.5, `placeholders, theme ${theme}`);
  }
  assert.match(CSS_BASE, /::placeholder \{ color: var\(--muted\); opacity: 1; \}/);
});

test('every token class the highlighter writes has its rule, and a colour in both themes that reads on code', () => {
  const all = (name: string): string[] =>
    [...CSS_BASE.matchAll(new RegExp(`--${name}: (#[0-9a-f]{6})`, 'g'))].map((m) => m[1] ?? '');
  const codeBg = all('code-bg');
  for (const cls of TOKEN_CLASSES) {
    assert.match(CSS_COMPONENTS, new RegExp(`\\.tk-${cls} \\{ color: var\\(--`), cls);
    // Added and removed lines are coloured as success and danger, their rows tinted.
    const colours = all(cls === 'add' ? 'ok' : cls === 'del' ? 'danger' : `tk-${cls}`);
    assert.equal(colours.length, 2, cls);
    for (const theme of [0, 1]) {
      const ratio = contrast(colours[theme] ?? '', codeBg[theme] ?? '');
      assert.ok(ratio >= 4.5, `${cls}, theme ${theme}: ${ratio.toFixed(2)}`);
    }
  }
});
