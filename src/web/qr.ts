import qrcode from 'qrcode-generator';
import { html, raw } from './html.ts';

/** Quiet zone in modules; the QR standard asks for four, the card's padding adds the rest. */
const MARGIN = 2;

/** A QR code's modules, row by row, one bit each (1 = dark): ~80 bytes for a short link. */
export interface QrModules {
  size: number;
  bits: Uint8Array;
}

/**
 * The modules of a QR code for `text`, error correction M. The costly part (most of it
 * choosing the best of eight masks), so callers keep the result.
 */
export function qrModules(text: string): QrModules {
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const size = qr.getModuleCount();
  const bits = new Uint8Array(Math.ceil((size * size) / 8));
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const i = row * size + col;
      if (qr.isDark(row, col)) bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7));
    }
  }
  return { size, bits };
}

const dark = (m: QrModules, row: number, col: number): boolean => {
  const i = row * m.size + col;
  return (((m.bits[i >> 3] as number) >> (i & 7)) & 1) === 1;
};

/** The dark modules as one SVG path of unit-high rectangles, one per run of dark modules in a row. */
function pathOf(m: QrModules): string {
  const n = m.size;
  let d = '';
  // Runs of dark modules in a row become one rectangle: far less markup than a square each.
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) {
      if (!dark(m, row, col)) continue;
      let run = 1;
      while (col + run < n && dark(m, row, col + run)) run++;
      d += `M${col + MARGIN} ${row + MARGIN}h${run}v1h-${run}z`;
      col += run - 1;
    }
  }
  return d;
}

/**
 * A QR code as an SVG document of its own (served as image/svg+xml, shown with <img>),
 * drawn with shape-rendering crispEdges so it scans at any size: always dark on white,
 * also in dark mode, since scanners expect that. No style, no script.
 */
export function qrSvgOf(m: QrModules, label: string): string {
  const size = m.size + 2 * MARGIN;
  return html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${8 * size}" \
height="${8 * size}" shape-rendering="crispEdges" data-modules="${m.size}"><title>${label}</title><rect fill="#fff" \
width="${size}" height="${size}"/><path fill="#000" d="${raw(pathOf(m))}"/></svg>
`.value;
}

/** A QR code for `text` as an SVG document. */
export const qrSvg = (text: string, label: string): string => qrSvgOf(qrModules(text), label);
