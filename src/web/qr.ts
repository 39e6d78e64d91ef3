import qrcode from 'qrcode-generator';
import { html, raw, type SafeHtml } from './html.ts';

/** Quiet zone in modules; the QR standard asks for four, the card's padding adds the rest. */
const MARGIN = 2;

/**
 * A QR code for `text` as inline SVG: one path of unit-high rectangles, one per run of dark modules, drawn
 * with shape-rendering crispEdges so it scans at any size. Colours come from classes in
 * the stylesheet (always dark on white, also in dark mode: scanners expect that), so the
 * markup carries no style attribute the CSP would have to allow.
 */
export function qrSvg(text: string, label: string): SafeHtml {
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const n = qr.getModuleCount();
  const size = n + 2 * MARGIN;
  let d = '';
  // Runs of dark modules in a row become one rectangle: a third of the markup of squares.
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      if (!qr.isDark(row, col)) continue;
      let run = 1;
      while (col + run < n && qr.isDark(row, col + run)) run++;
      d += `M${col + MARGIN} ${row + MARGIN}h${run}v1h-${run}z`;
      col += run - 1;
    }
  }
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" role="img" aria-label="${label}" shape-rendering="crispEdges" data-modules="${n}"><rect class="qr-bg" width="${size}" height="${size}"/><path class="qr-fg" d="${raw(d)}"/></svg>`;
}
