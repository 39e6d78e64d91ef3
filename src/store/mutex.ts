/** Serializes async work per key; keys with nothing queued cost no memory. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const result = prev.then(fn, fn);
    // The tail swallows errors: one failed step must not poison the next in line.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /**
   * Waits for `key`'s turn and answers what ends it: for a turn held across work that is not
   * one function (store/pastes.ts holds an owner's turn through a paste's write).
   */
  async enter(key: string): Promise<() => void> {
    let leave!: () => void;
    const held = new Promise<void>((resolve) => {
      leave = resolve;
    });
    await new Promise<void>((entered) => {
      void this.run(key, () => {
        entered();
        return held;
      });
    });
    return leave;
  }
}
