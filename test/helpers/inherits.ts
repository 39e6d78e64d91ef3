import assert from 'node:assert/strict';

/**
 * Asserts that a bag of submitted fields inherits nothing: every object on its prototype
 * chain is empty and frozen, so `__proto__`, `constructor` or `toString` can only be the
 * bag's own keys, and no bag can be used to change what the others inherit.
 */
export function assertInheritsNothing(o: object): void {
  for (
    let p: object | null = Object.getPrototypeOf(o) as object | null;
    p !== null;
    p = Object.getPrototypeOf(p) as object | null
  ) {
    assert.deepEqual(Reflect.ownKeys(p), [], 'a prototype of the bag has properties');
    assert.ok(Object.isFrozen(p), 'a prototype of the bag can be changed');
  }
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    assert.ok(!(name in o) || Object.hasOwn(o, name), `${name} is inherited`);
  }
}
