/**
 * Lines of text waiting to be written, kept as UTF-8 bytes outside the JS heap: one Buffer
 * for the bytes and one array of where each line ends. A line held as a string for the
 * second or so until the next flush outlives a couple of young-generation collections and
 * is copied into the old generation, where only a full collection frees it; at tens of
 * thousands of requests a second that was most of what the server promoted. Here the
 * string dies young, and the bytes cost the collector nothing.
 */
export class LineBuffer {
  #bytes: Buffer = EMPTY;
  /** `#ends[i]` is the byte offset just past line i. */
  #ends = new Uint32Array(0);
  /** The oldest line still held (lines before it were dropped). */
  #first = 0;
  /** Lines pushed, dropped ones included. */
  #count = 0;

  /** Lines held. */
  get length(): number {
    return this.#count - this.#first;
  }

  /** Bytes held. */
  get byteLength(): number {
    return this.#end(this.#count) - this.#end(this.#first);
  }

  push(line: string): void {
    // At most three bytes per UTF-16 unit, so a line always fits once there is room for that.
    const start = this.#reserve(line.length * 3);
    this.#ends[this.#count] = start + this.#bytes.write(line, start);
    this.#count += 1;
  }

  /** The size in bytes of line `i`, counted from the oldest line held. */
  size(i: number): number {
    return this.#end(this.#first + i + 1) - this.#end(this.#first + i);
  }

  /** The bytes of lines `from` up to `to` (exclusive): a view, not a copy; pushes never write into it. */
  bytes(from: number, to: number): Buffer {
    return this.#bytes.subarray(this.#end(this.#first + from), this.#end(this.#first + to));
  }

  /** Forgets the `n` oldest lines. */
  drop(n: number): void {
    this.#first = Math.min(this.#count, this.#first + n);
  }

  /**
   * Forgets every line, keeping the storage for new ones unless it grew past MAX_KEPT_BYTES
   * (a burst's size is not held for good). Answers whether the storage was kept.
   */
  clear(): boolean {
    this.#first = 0;
    this.#count = 0;
    if (this.#bytes.length <= MAX_KEPT_BYTES) return true;
    this.#bytes = EMPTY;
    this.#ends = new Uint32Array(0);
    return false;
  }

  /** Appends a copy of every line `other` holds (itself included: its lines as they are now). */
  pushAll(other: LineBuffer): void {
    const n = other.length;
    for (let i = 0; i < n; i++) {
      const line = other.bytes(i, i + 1);
      const start = this.#reserve(line.length);
      line.copy(this.#bytes, start);
      this.#ends[this.#count] = start + line.length;
      this.#count += 1;
    }
  }

  /** Where the next line goes, with room for `bytes` of it and a slot for its end. */
  #reserve(bytes: number): number {
    if (this.#end(this.#count) + bytes > this.#bytes.length || this.#count === this.#ends.length) this.#grow(bytes);
    return this.#end(this.#count);
  }

  #end(line: number): number {
    return line === 0 ? 0 : (this.#ends[line - 1] ?? 0);
  }

  /**
   * Makes room for one more line of up to `room` bytes: moves the lines held to the front of
   * fresh storage twice their size (or more), so dropped lines give their space back.
   */
  #grow(room: number): void {
    const base = this.#end(this.#first);
    const live = this.#end(this.#count) - base;
    const lines = this.#count - this.#first;
    const bytes = Buffer.allocUnsafe(Math.max(MIN_BYTES, 2 * (live + room)));
    this.#bytes.copy(bytes, 0, base, base + live);
    const ends = new Uint32Array(Math.max(MIN_LINES, 2 * (lines + 1)));
    for (let i = 0; i < lines; i++) ends[i] = (this.#ends[this.#first + i] ?? 0) - base;
    this.#bytes = bytes;
    this.#ends = ends;
    this.#first = 0;
    this.#count = lines;
  }
}

const EMPTY = Buffer.alloc(0);
const MIN_BYTES = 64 * 1024;
const MIN_LINES = 256;
/** The most storage a cleared buffer keeps: about a second's lines at the busiest rate in bench/README.md. */
const MAX_KEPT_BYTES = 8 * 1024 * 1024;
