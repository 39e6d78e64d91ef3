/*
 * Scanning the whole sample once per substring clue was most of the cost, so one pass puts
 * the sample's character bigrams and trigrams into a 64 Kbit set, and a clue with an n-gram
 * missing from the set is skipped unscanned. A hash collision only lets a clue through.
 */
const bigram = (a: number, b: number): number => (a * 31 + b + 0x8000) & 0xffff;
const trigram = (a: number, b: number, c: number): number => (a * 961 + b * 31 + c) & 0xffff;

/** Hashes of the n-grams of a clue's literal, to rule it out before scanning for it. */
export function gramsOf(literal: string): number[] {
  const grams: number[] = [];
  for (let i = 1; i < literal.length; i++) {
    const [a, b, c] = [literal.charCodeAt(i - 2), literal.charCodeAt(i - 1), literal.charCodeAt(i)];
    grams.push(bigram(b, c));
    if (i >= 2) grams.push(trigram(a, b, c));
  }
  return grams;
}

/** Words in a gram set's bitmap. */
export const GRAM_WORDS = 0x10000 / 32;

/**
 * The set of the sample's n-gram hashes, as a bitmap, written into `bits` (cleared first):
 * callers reuse one bitmap rather than allocate 8 KB per paste.
 */
export function gramSet(sample: string, bits = new Uint32Array(GRAM_WORDS)): Uint32Array {
  bits.fill(0);
  let a = 0;
  let b = sample.charCodeAt(0);
  for (let i = 1; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    const h2 = bigram(b, c);
    const h3 = trigram(a, b, c);
    bits[h2 >>> 5]! |= 1 << (h2 & 31);
    bits[h3 >>> 5]! |= 1 << (h3 & 31);
    a = b;
    b = c;
  }
  return bits;
}

/** Whether every one of `grams` is in the set (false: the literal cannot occur). */
export function mayContain(bits: Uint32Array, grams: readonly number[]): boolean {
  for (const h of grams) if (((bits[h >>> 5] ?? 0) & (1 << (h & 31))) === 0) return false;
  return true;
}
