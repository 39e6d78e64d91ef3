import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PasswordGate } from '../../src/crypto/password-gate.ts';
import { hashPassword, passwordHashProblem, Passwords, verifyPassword } from '../../src/crypto/passwords.ts';

const SALT = 'yYKURqlNAFZKwgEDaW-hyQ';
const KEY = 'kp7L_bThk67DHN-rS4DyHv8BNDlbDYKlE4TAn9LOEMA';
const stored = (n: number, r: number, p: number): string => `scrypt$${n}$${r}$${p}$${SALT}$${KEY}`;

describe('stored password hashes', () => {
  test('what this server writes is accepted, and verifies the password it was made from', async () => {
    const h = await hashPassword('correct horse');
    assert.match(h, /^scrypt\$16384\$8\$1\$/);
    assert.equal(passwordHashProblem(h), null);
    assert.equal(await verifyPassword('correct horse', h), true);
    assert.equal(await verifyPassword('wrong horse', h), false);
  });

  test('parameters up to twice the cost are accepted; anything else is refused by name', () => {
    for (const [n, r, p] of [
      [16_384, 8, 1],
      [32_768, 8, 1],
      [16_384, 8, 2],
      [32_768, 8, 2],
    ] as const)
      assert.equal(passwordHashProblem(stored(n, r, p)), null, `${n} ${r} ${p}`);
    const table: [string, string][] = [
      [stored(16_384, 8, 40_000), 'p is 40000, not 1 or 2'],
      [stored(3, 8, 1), 'N is 3, not 16384 or 32768'],
      [stored(2 ** 30, 8, 1), 'N is 1073741824, not 16384 or 32768'],
      [stored(65_536, 8, 1), 'N is 65536, not 16384 or 32768'],
      [stored(16_384, 16, 1), 'r is 16, not 8'],
    ];
    for (const [hash, why] of table) {
      const problem = passwordHashProblem(hash);
      assert.equal(problem?.kind, 'parameters', hash);
      assert.match(problem?.message ?? '', new RegExp(why), hash);
    }
    for (const shape of [
      'plaintextpw',
      `scrypt$016384$8$1$${SALT}$${KEY}`,
      `scrypt$16384$8$1$short$${KEY}`,
      `scrypt$16384$8$1$${SALT}$${KEY}AA`,
      `bcrypt$16384$8$1$${SALT}$${KEY}`,
    ])
      assert.equal(passwordHashProblem(shape)?.kind, 'shape', shape);
  });

  test('a refused stored hash verifies nothing, computes nothing, and is reported once per subject', async () => {
    const told: string[] = [];
    const passwords = new Passwords({
      derive: () => assert.fail('nothing may be computed for a refused hash'),
      refused: (subject, problem) => told.push(`${subject}: ${problem}`),
    });
    for (const hash of [stored(16_384, 8, 40_000), stored(3, 8, 1), stored(2 ** 30, 8, 1)]) {
      assert.equal(await passwords.verify('anything', hash, `paste ${hash.split('$')[1]}`), false);
      assert.equal(await passwords.verify('anything', hash, `paste ${hash.split('$')[1]}`), false);
    }
    assert.equal(told.length, 3, told.join('\n'));
    assert.match(told[0] ?? '', /^paste 16384: scrypt parameters this server does not accept: p is 40000/);
  });

  test('hash and verify each take a slot of the gate', async () => {
    const gate = new PasswordGate({ concurrency: 1, queue: 0, retryAfterSec: 1 });
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    const passwords = new Passwords({
      gate,
      derive: async () => {
        await slow;
        return Buffer.alloc(32);
      },
    });
    const first = passwords.hash('one');
    await assert.rejects(passwords.verify('two', stored(16_384, 8, 1)), /busy checking passwords/);
    release();
    assert.match(await first, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$A{43}$/);
  });
});
