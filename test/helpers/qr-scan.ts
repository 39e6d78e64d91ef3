import jsQRModule from 'jsqr';

// jsqr is CommonJS with an ES-style default export: TypeScript sees the module object, Node
// hands over the function (which also carries itself as .default).
const jsQR = (jsQRModule as unknown as { default: typeof jsQRModule.default }).default;

/**
 * What a phone would read from one of our QR SVGs: its rectangles (`M x y h run v1 h-run z`)
 * drawn as pixels, 4 per module, black on white, and decoded with jsQR. Null when nothing
 * scans.
 */
export function scanQrSvg(svg: string): string | null {
  const size = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1]);
  const d = /<path [^>]*d="([^"]*)"/.exec(svg)?.[1] ?? '';
  const scale = 4;
  const px = size * scale;
  const rgba = new Uint8ClampedArray(px * px * 4).fill(255);
  for (const m of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    const [x, y, run] = [Number(m[1]), Number(m[2]), Number(m[3])];
    for (let row = y * scale; row < (y + 1) * scale; row++) {
      for (let col = x * scale; col < (x + run) * scale; col++) {
        const i = (row * px + col) * 4;
        rgba[i] = rgba[i + 1] = rgba[i + 2] = 0;
      }
    }
  }
  return jsQR(rgba, px, px, { inversionAttempts: 'dontInvert' })?.data ?? null;
}
